// CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320): the check value of
// every persisted record. Bitwise: small flash, and records are short.
#ifndef BLUR_CRC32_H
#define BLUR_CRC32_H

#include <stddef.h>
#include <stdint.h>

namespace blur {

uint32_t crc32(const uint8_t* data, size_t length);

// Incremental form: crc32_finish(crc32_update(crc32_start(), ...)) equals crc32().
inline constexpr uint32_t crc32_start() { return 0xFFFFFFFFu; }
uint32_t crc32_update(uint32_t state, const uint8_t* data, size_t length);
inline constexpr uint32_t crc32_finish(uint32_t state) { return ~state; }

}  // namespace blur

#endif  // BLUR_CRC32_H
