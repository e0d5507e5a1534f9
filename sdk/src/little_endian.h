// Explicit little-endian (de)serialization: persisted records never depend
// on the compiler's struct layout or the CPU's byte order.
#ifndef BLUR_SRC_LITTLE_ENDIAN_H
#define BLUR_SRC_LITTLE_ENDIAN_H

#include <stdint.h>

namespace blur {

inline void store_le32(uint8_t* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void store_le64(uint8_t* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint32_t load_le32(const uint8_t* in) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | in[i];
  return v;
}
inline uint64_t load_le64(const uint8_t* in) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | in[i];
  return v;
}

}  // namespace blur

#endif  // BLUR_SRC_LITTLE_ENDIAN_H
