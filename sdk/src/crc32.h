// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), bitwise: no table,
// so it costs no flash beyond its loop. Check value: crc32("123456789") ==
// 0xCBF43926.
#ifndef BLUR_SRC_CRC32_H
#define BLUR_SRC_CRC32_H

#include <stddef.h>
#include <stdint.h>

namespace blur {

uint32_t crc32(const uint8_t* data, size_t length);

}  // namespace blur

#endif  // BLUR_SRC_CRC32_H
