#!/usr/bin/env bash
# How fast qemu-user runs the SDK's integer work on each big-endian
# candidate (the README's "Why s390x"): one program (the SDK's CRC-32 and
# little-endian codec, 64-bit multiply, divide and modulo as the exact
# samplers use them) built with Debian's cross g++ for s390x and 32-bit
# PowerPC, run interleaved three times; prints user and wall seconds.
#   scripts/qemu-user-speed.sh     (needs g++-s390x-linux-gnu, g++-powerpc-linux-gnu, qemu-user)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/bench.cpp" <<'CPP'
#include <stdio.h>

#include "blur/storage/crc32.h"
#include "little_endian.h"

int main() {
  static uint8_t buf[65536];
  uint64_t x = 0x9E3779B97F4A7C15ull, acc = 0;
  for (int round = 0; round < 1000; ++round) {
    for (size_t i = 0; i + 8 <= sizeof buf; i += 8) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      blur::store_le64(buf + i, x);
      acc += blur::load_le32(buf + i) % 1000003u;
      acc ^= (x >> 7) / ((x & 0xFFFF) | 1);
    }
    acc += blur::crc32(buf, sizeof buf);
  }
  printf("%llu\n", static_cast<unsigned long long>(acc));  // the same on every target
}
CPP
targets=(s390x-linux-gnu:qemu-s390x powerpc-linux-gnu:qemu-ppc)
for t in "${targets[@]}"; do
  triple=${t%%:*}
  "$triple-g++" -O2 -std=c++17 -I"$root/sdk/include" -I"$root/sdk/src" "$work/bench.cpp" \
    "$root/sdk/src/crc32.cpp" -o "$work/bench-$triple"
done
for run in 1 2 3; do
  for t in "${targets[@]}"; do
    triple=${t%%:*} qemu=${t#*:}
    /usr/bin/time -f "run $run $qemu: %U s user, %e s wall" "$qemu" -L "/usr/$triple" "$work/bench-$triple" > /dev/null
  done
done
