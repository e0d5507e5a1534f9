// Records on the storage port, shared by the ledger and the report queue
// (littlefs' discipline: a record becomes valid by a commit mark written
// last, in a program unit of its own, then everything is read back).
//
// A record at an offset aligned to the port's program unit (prog_size):
//   body bytes, padded with the erased value to a whole number of units |
//   commit unit: crc32 u32 (IEEE 802.3, over the body) padded to one unit
// Power lost before the commit unit is durable leaves a record whose CRC
// does not match. No unit is programmed twice: the padding is programmed
// with its unit and the commit unit is never shared.
#ifndef BLUR_SRC_FLASH_WRITE_H
#define BLUR_SRC_FLASH_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "blur/config.h"
#include "blur/port.h"
#include "blur/status.h"

namespace blur {

// The one check of a log's storage: callbacks present, prog_size a power
// of two up to BLUR_MAX_PROG_SIZE, block_size a multiple of it and at least
// `min_block_size`, erase_value 0xFF or 0x00, the counter callbacks both
// present or both absent; and a partition of at least `min_blocks` blocks,
// all inside the port's storage.
bool storage_fits(const Port& port, Partition partition, uint32_t min_blocks,
                  uint32_t min_block_size);

// `bytes` rounded up to whole program units.
inline uint32_t unit_align(const Port& port, uint32_t bytes) {
  return (bytes + port.prog_size - 1) & ~(port.prog_size - 1);
}
// Flash taken by a record whose body has `body_size` bytes.
inline uint32_t record_span(const Port& port, uint32_t body_size) {
  return unit_align(port, body_size) + unit_align(port, 4);
}

// Appends a record to a block's log: its body is `head` then `tail` (tail
// may be empty), programmed at *offset of `block`. While it is written
// *offset is block_size (the log is sealed until the record is known
// good); then it is the offset after the record. Every program covers
// whole aligned units; the commit unit is programmed last, on its own;
// then sync and read-back: kOk; kStorageFailure if the port failed;
// kStorageWornOut if the port said so or flash holds other bytes than
// were programmed (a worn block).
Status append_record(const Port& port, uint32_t block, uint32_t* offset, const uint8_t* head,
                     uint32_t head_size, const uint8_t* tail = nullptr, uint32_t tail_size = 0);

// Whether the record with a `body_size`-byte body at (block, offset) is
// valid (its commit unit holds the body's CRC): kOk, kStorageCorrupt if not
// (torn, corrupt or erased), kStorageFailure if the port failed. With
// `mark_at`, the CRC is read there instead (an older format's layout).
Status check_record(const Port& port, uint32_t block, uint32_t offset, uint32_t body_size,
                    uint32_t mark_at = 0);

// The one reader of the SDK's logs: records appended one after another in a
// block from `offset` (the ledger's entries after its snapshot, the
// acknowledgement log, a report segment's entries). For each record it
// reads the first `head_size` bytes (at most kMaxLogHead): all erased is
// the end of the log. Fixed-size records (span == nullptr) have a body of
// `head_size` bytes; otherwise span(context, head, &body_size) gives the
// record's body size and the flash it takes, 0 for a header that cannot
// be a record's. A record whose CRC fails ends the log (torn). Each valid
// record goes to visit(context, head, offset, body_size): a status other
// than kOk stops the scan and is returned, with *end = block_size.
// Otherwise *end is where the next record goes: the end of the log if
// everything after it is erased, else block_size (sealed: appends must
// not continue after torn or foreign bytes).
inline constexpr uint32_t kMaxLogHead = 40;
struct LogVisitor {
  uint32_t (*span)(void* context, const uint8_t* head, uint32_t* body_size);
  Status (*visit)(void* context, const uint8_t* head, uint32_t offset, uint32_t body_size);
  void* context;
};
Status scan_log(const Port& port, uint32_t block, uint32_t offset, uint32_t head_size,
                const LogVisitor& visitor, uint32_t* end);

// All `length` bytes equal the erased value.
bool is_erased(const uint8_t* bytes, size_t length, uint8_t erase_value);
// A port's program or erase status as the SDK reports it: kOk, kStorageWornOut
// (the port says the block wore out), or kStorageFailure.
inline Status storage_status(Status port_status) {
  return port_status == Status::kOk || port_status == Status::kStorageWornOut
             ? port_status
             : Status::kStorageFailure;
}

// Sequence a is newer than b, modulo 2^32 (RFC 1982 serial arithmetic).
inline bool sequence_newer(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) > 0; }

}  // namespace blur

#endif  // BLUR_SRC_FLASH_WRITE_H
