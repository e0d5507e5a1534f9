// Explicit little-endian (de)serialization: persisted records never depend
// on the compiler's struct layout or the CPU's byte order. Written as whole
// expressions, which compilers turn into single (unaligned) loads and
// stores on little-endian CPUs that allow them (Cortex-M3/M4, x86, aarch64).
#ifndef BLUR_SRC_LITTLE_ENDIAN_H
#define BLUR_SRC_LITTLE_ENDIAN_H

#include <stdint.h>
#include <string.h>

namespace blur {

// Whether the CPU stores words least significant byte first.
inline constexpr bool kLittleEndianCpu = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

// Reverses the bytes of each of `count` words of `width` bytes at `words`:
// between the CPU's order and little-endian on a big-endian CPU.
inline void reverse_words(void* words, uint32_t width, uint32_t count) {
  uint8_t* p = static_cast<uint8_t*>(words);
  for (uint32_t w = 0; w < count; ++w, p += width) {
    for (uint32_t i = 0, j = width - 1; i < j; ++i, --j) {
      const uint8_t t = p[i];
      p[i] = p[j];
      p[j] = t;
    }
  }
}

inline void store_le32(uint8_t* out, uint32_t v) {
  if constexpr (kLittleEndianCpu) {
    // (GCC does not merge the byte stores below into one: a word copy is
    // one store where the CPU allows unaligned ones.)
    memcpy(out, &v, sizeof v);
    return;
  }
  out[0] = static_cast<uint8_t>(v);
  out[1] = static_cast<uint8_t>(v >> 8);
  out[2] = static_cast<uint8_t>(v >> 16);
  out[3] = static_cast<uint8_t>(v >> 24);
}
inline void store_le64(uint8_t* out, uint64_t v) {
  store_le32(out, static_cast<uint32_t>(v));
  store_le32(out + 4, static_cast<uint32_t>(v >> 32));
}
inline uint32_t load_le32(const uint8_t* in) {
  return static_cast<uint32_t>(in[0]) | static_cast<uint32_t>(in[1]) << 8 |
         static_cast<uint32_t>(in[2]) << 16 | static_cast<uint32_t>(in[3]) << 24;
}
inline uint64_t load_le64(const uint8_t* in) {
  return load_le32(in) | static_cast<uint64_t>(load_le32(in + 4)) << 32;
}

}  // namespace blur

#endif  // BLUR_SRC_LITTLE_ENDIAN_H
