// Durable writes and reads of records on the storage port, shared by the
// ledger and the report queue (littlefs' discipline: a commit mark written
// last, then read back).
#ifndef BLUR_SRC_FLASH_WRITE_H
#define BLUR_SRC_FLASH_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "blur/port.h"
#include "blur/status.h"

namespace blur {

// Programs `body` at `offset` of `block`, then `mark` (its CRC) right after
// it, syncs, and reads both back. Power lost before the mark is durable
// leaves a record whose CRC does not match. kStorageFailure if the port
// fails or the flash does not hold what was written.
Status program_verified(const Port& port, uint32_t block, uint32_t offset, const uint8_t* body,
                        uint32_t body_size, const uint8_t* mark, uint32_t mark_size);

// Whether `size` bytes at `offset` of `block` equal `expected` (read in
// small chunks: no large buffers). kStorageFailure if not, or on a port error.
Status read_back(const Port& port, uint32_t block, uint32_t offset, const uint8_t* expected,
                 uint32_t size);

// CRC-32 of `size` bytes at `offset` of `block`, read in small chunks.
Status crc_of_flash(const Port& port, uint32_t block, uint32_t offset, uint32_t size,
                    uint32_t* crc);

// All bytes 0xFF (erased NOR flash).
bool is_erased(const uint8_t* bytes, size_t length);

// Sequence a is newer than b, modulo 2^32 (RFC 1982 serial arithmetic).
inline bool sequence_newer(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) > 0; }

}  // namespace blur

#endif  // BLUR_SRC_FLASH_WRITE_H
