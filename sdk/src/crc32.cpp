#include "blur/storage/crc32.h"

namespace blur {

uint32_t crc32_update(uint32_t crc, const uint8_t* data, size_t length) {
  for (size_t i = 0; i < length; ++i) {
    crc ^= data[i];
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
  }
  return crc;
}

uint32_t crc32(const uint8_t* data, size_t length) {
  return crc32_finish(crc32_update(crc32_start(), data, length));
}

}  // namespace blur
