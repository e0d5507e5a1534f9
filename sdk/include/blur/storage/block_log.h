// Which block of a partition a log is in: the one wear levelling of the
// ledger's log, the report queue's segments and its acknowledgement log.
//
// Appends go to the active block, one record after another (flash_write.h
// in the SDK's sources: append_record, scan_log). When a record does not
// fit, the log moves on: the next block of the partition (round robin, for
// even wear) is erased and the log continues there, starting with the
// owner's head record (a ledger snapshot, a segment header, the first
// acknowledgement). After a reboot the owner reads each block and offers
// the sequence of its newest valid head to consider(): the newest wins
// (RFC 1982 serial arithmetic), so a torn move leaves the block before in
// force. What a record means is the owner's; this is only where it goes.
#ifndef BLUR_STORAGE_BLOCK_LOG_H
#define BLUR_STORAGE_BLOCK_LOG_H

#include <stdint.h>

#include "blur/port.h"
#include "blur/status.h"

namespace blur {

struct BlockLog {
  uint32_t first_block = 0;  // the partition's blocks
  uint32_t block_count = 0;
  uint32_t active = 0;       // index of the block appends go to
  uint32_t offset = 0;       // where its next record goes; block_size: full or sealed
  uint32_t sequence = 0;     // the newest sequence considered (the owner's numbering)
  bool has_active = false;   // false: nothing written yet (the log starts at index 0)

  // Forgets the blocks' contents (before reading them, or a new log).
  void reset(Partition partition) {
    *this = BlockLog{};
    first_block = partition.first_block;
    block_count = partition.block_count;
  }
  uint32_t block(uint32_t index) const { return first_block + index; }
  // The index the log moves on to.
  uint32_t next() const { return has_active ? (active + 1) % block_count : 0; }
  // Whether a record taking `span` bytes of flash fits in the active block.
  bool has_room(const Port& port, uint32_t span) const {
    return has_active && offset + span <= port.block_size;
  }
  // Block `index` holds `sequence`: if it is the newest so far (or the
  // first), it becomes the active block, its log ending at `end`.
  bool consider(uint32_t index, uint32_t sequence, uint32_t end);
  // Erases the next block and makes it the active one, empty (kOk,
  // kStorageWornOut or kStorageFailure; on failure nothing changes).
  Status move_on(const Port& port);
  // append_record (flash_write.h) at the end of the active block.
  Status append(const Port& port, const uint8_t* head, uint32_t head_size,
                const uint8_t* tail = nullptr, uint32_t tail_size = 0);
};

}  // namespace blur

#endif  // BLUR_STORAGE_BLOCK_LOG_H
