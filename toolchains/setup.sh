#!/usr/bin/env bash
# Installs what Blur's build needs on Debian 12 and fetches the nanopb and
# mbedTLS sources (Debian source packages) that every target is built from.
# Idempotent: with everything present it only checks and returns.
#
#   toolchains/setup.sh            # everything: every target and every test
#   toolchains/setup.sh --demo     # only what scripts/demo.sh builds and runs
#   BLUR_DEPS_DIR=/path toolchains/setup.sh
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
deps_dir=${BLUR_DEPS_DIR:-$root/.deps}
profile=all
case ${1:-} in
  "") ;;
  --demo) profile=demo ;;
  *) echo "usage: $0 [--demo]" >&2; exit 2 ;;
esac

# The programs the demo runs: the SDK, the collector, the trainer and the
# device simulator (`cmake --preset demo`).
demo_packages=(
  cmake ninja-build g++ pkg-config
  # a compiler cache: scripts/test-all.sh recompiles only what changed
  ccache
  # wire format: nanopb generator (python) and its protobuf module
  nanopb python3 python3-protobuf
  # collector
  libsqlite3-dev libcpp-httplib-dev libssl-dev nlohmann-json3-dev libcli11-dev curl
  libboost1.74-dev libtomlplusplus-dev libjs-chart.js libpq-dev
  # collector training data: the demo corpus and the public word list
  fortunes fortunes-min wamerican
  # the public text's KJV comes out of bible-kjv's own program, run from its
  # unpacked package (scripts/public-corpus.sh)
  libreadline8
  libeigen3-dev
  # the trainer's GEMMs: OpenBLAS with run-time CPU dispatch and threads
  libopenblas-dev libopenblas0-pthread
)
# Everything else the tests need: other compilers and targets, the real
# servers, browser, JVM and deployment tools they drive.
packages=(
  "${demo_packages[@]}"
  # the tests and benchmarks (`cmake --preset host`)
  libgtest-dev libgmock-dev libbenchmark-dev
  # fuzzers and the host-asan preset's runtime
  clang libclang-rt-14-dev
  # the sqlite3 shell: tests/collector/rollup_kill_test.sh probes a frozen
  # collector's write lock and counts its day rows with it
  sqlite3
  # the collector dashboard's test drives a headless Chromium over the
  # DevTools protocol (fonts for its screenshots: setup installs without
  # recommends); Chart.js itself (above) is built into the binary
  chromium python3-websocket fonts-dejavu-core
  # collector on PostgreSQL: the server the tests start (libpq-dev above)
  postgresql
  # ingest benchmarks: a load generator from outside the project
  wrk
  # Cortex-M4: bare-metal gcc + picolibc, run on the mps2-an386 board
  gcc-arm-none-eabi binutils-arm-none-eabi picolibc-arm-none-eabi
  libstdc++-arm-none-eabi-picolibc qemu-system-arm
  # aarch64 Linux, run with qemu-user
  g++-aarch64-linux-gnu qemu-user
  # s390x Linux (big-endian) and 32-bit Arm Linux (armhf), run with qemu-user
  g++-s390x-linux-gnu g++-arm-linux-gnueabihf
  # RISC-V 32 (rv32imac): bare-metal gcc + picolibc (no libstdc++: the SDK's
  # blur/compat/std_facilities.h), run on QEMU's virt board
  gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc
  # the Java binding (examples/java): JNI headers, javac and jar, and the
  # JVM its test runs
  default-jdk
  # deployment (tests/deploy): podman builds and runs the container image
  # (on runc), systemd-analyze checks the unit and strace the system calls
  # its filter must allow, Python's YAML and JSON Schema hold the OpenAPI
  # description to the collector's answers, node runs Redocly's CLI (below)
  podman runc systemd strace python3-yaml python3-jsonschema nodejs
)
# npm: Debian's package, unless the machine's nodejs has its own.
command -v npm > /dev/null || packages+=(npm)
[ "$profile" = all ] || packages=("${demo_packages[@]}")

# Redocly's CLI validates collector/api/openapi.yaml (deploy.openapi_lint):
# installed with the machine's npm (and its registry configuration) into
# $deps_dir/redocly, pinned. 1.34 runs on Debian 12's Node.js 18.
redocly_version=1.34.5
redocly_installed() {
  grep -qs "\"version\": \"$redocly_version\"" \
    "$deps_dir/redocly/node_modules/@redocly/cli/package.json"
}

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

need_sources=0
for s in nanopb mbedtls; do
  [ -f "$deps_dir/$s/.blur-extracted" ] || need_sources=1
done
[ "$profile" = demo ] || redocly_installed || need_sources=1
[ -e "$deps_dir/public-text/root/.unpacked" ] || need_sources=1

if [ ${#missing[@]} -eq 0 ] && [ $need_sources -eq 0 ]; then
  echo "setup: all packages and sources present ($deps_dir)"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  [ ${#missing[@]} -eq 0 ] || echo "setup: missing Debian packages: ${missing[*]}" >&2
  [ $need_sources -eq 0 ] ||
    echo "setup: missing nanopb/mbedTLS sources or Redocly's CLI in $deps_dir" >&2
  echo "setup: run as root (e.g. sudo $0) to install them" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive

# deb-src entries, derived only from this machine's own apt configuration
# (derive-deb-src.sh); if none can be derived, stop and say what to add.
if ! grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  echo "setup: adding deb-src entries that mirror this machine's deb entries"
  derived=$("$here/derive-deb-src.sh") || { echo "setup: stopping" >&2; exit 1; }
  printf '%s\n' "${derived%%# one-line*}" > /etc/apt/sources.list.d/blur-deb-src.sources
  if [[ "$derived" == *"# one-line"* ]]; then
    printf '%s\n' "${derived#*# one-line}" > /etc/apt/sources.list.d/blur-deb-src.list
  fi
  added_deb_src=1
else
  added_deb_src=0
fi

if [ ${#missing[@]} -gt 0 ] || [ $added_deb_src -eq 1 ]; then
  echo "setup: apt-get update"
  apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  # dpkg syncs every file it unpacks; on a virtual machine's disk that is
  # most of the install's time (demo packages: 166 s against 62 s measured
  # on a loaded 2-core machine). Unpacked without those syncs (as Debian's
  # container images do), then made durable by one sync of everything.
  apt-get install -y -qq --no-install-recommends -o Dpkg::Options::=--force-unsafe-io \
    "${missing[@]}" >/dev/null
  sync
fi

mkdir -p "$deps_dir"
for s in nanopb mbedtls; do
  [ -f "$deps_dir/$s/.blur-extracted" ] && continue
  echo "setup: fetching Debian source package $s"
  # apt downloads as the unprivileged _apt user: give it a directory it may write.
  download=$(mktemp -d)
  chmod 0777 "$download"
  if ! (cd "$download" && apt-get source --download-only -qq "$s" >/dev/null 2>&1); then
    apt-get update -qq  # a deb-src entry whose lists were never fetched
    (cd "$download" && apt-get source --download-only -qq "$s" >/dev/null)
  fi
  mv -f "$download"/* "$deps_dir"/
  rmdir "$download"
  orig=$(ls "$deps_dir"/${s}_*.orig.tar.* | head -n1)
  rm -rf "$deps_dir/$s" && mkdir -p "$deps_dir/$s"
  tar -xf "$orig" -C "$deps_dir/$s" --strip-components=1
  basename "$orig" > "$deps_dir/$s/.blur-extracted"
done
# The public text's packages (scripts/public-corpus.sh), downloaded and
# unpacked, never installed: the public model's pretraining and its test.
if [ ! -e "$deps_dir/public-text/root/.unpacked" ]; then
  echo "setup: fetching the public text's packages (wordnet-base, bible-kjv, dict-gcide)"
  BLUR_DEPS_DIR=$deps_dir "$root/scripts/public-corpus.sh" --fetch-only
fi
if [ "$profile" = all ] && ! redocly_installed; then
  echo "setup: installing Redocly's CLI $redocly_version with npm into $deps_dir/redocly"
  mkdir -p "$deps_dir/redocly"
  npm install --prefix "$deps_dir/redocly" --no-audit --no-fund --save-exact \
    "@redocly/cli@$redocly_version" > /dev/null
fi
echo "setup: done (sources in $deps_dir)"
