// A persisted, bounded queue of encoded reports waiting for the collector's
// acknowledgement, on a range of erase blocks of the storage port.
//
// Why: a report's epsilon is spent when it is made; if the device is
// offline or loses power, the report must wait on flash, not in RAM.
// Reports leave the queue only when acknowledged; when the queue is full,
// the caller refuses new values before charging anything (has_room()).
//
// Layout: the first two blocks of the partition are the acknowledgement
// log, the others a ring of report segments. Every record is written in
// whole program units with its CRC in a unit of its own (flash_write.h), so
// a torn write leaves a record whose CRC fails.
//
//   Acknowledgement log: records appended in one block
//     magic u32 | sequence u32 | ack_floor u64 | commit unit (crc32)
//   (every report id below ack_floor is acknowledged); when the block is
//   full the other one is erased and continues the log. The valid record
//   with the newest sequence wins, so a torn record or a torn erase leaves
//   the previous floor in force. One erase per block's worth of acks.
//
//   Report segments: a header
//     magic u32 | format u32 (2) | segment_sequence u32 | commit unit
//   then entries
//     type u8 (1 = report) | 0 u8 | length u16 | 0 u32 | report_id u64 |
//     blur.Report message[length] | commit unit (crc32 over both)
//   A torn entry fails its CRC: open() stops reading that segment there and
//   seals it (appends continue in a fresh segment). Segments of format 1
//   (byte-programmable flash, entries padded to 4 bytes) are still read.
//
// A segment is reused (erased, new header) only when it holds no
// unacknowledged report, so an erase never loses one. Acknowledgements live
// apart from the reports, so a full queue can always record the
// acknowledgement that empties it. Report ids come from the ledger and
// increase, so "below the floor" is "acknowledged".
#ifndef BLUR_REPORT_QUEUE_H
#define BLUR_REPORT_QUEUE_H

#include <stddef.h>
#include <stdint.h>

#include "blur/port.h"
#include "blur/storage/block_log.h"
#include "blur/status.h"

namespace blur {

class ReportQueue {
 public:
  static constexpr uint32_t kMaxBlocks = 64;
  // A block must hold the segment header and an entry of this many bytes.
  static constexpr uint32_t kMinReportRoom = 64;

  ReportQueue() = default;

  // Uses the blocks of `partition` (3..kMaxBlocks of them: two for
  // acknowledgements, the rest for reports) of `port`; blank blocks are
  // formatted as needed. Scans the log and recovers from a torn write.
  // kInvalidArgument for a partition outside the port's storage,
  // kStorageFailure if the port fails.
  Status open(const Port& port, Partition partition);

  // The largest report message that fits in one entry.
  uint32_t max_report_size() const;
  // How many reports of `report_size` bytes one segment holds on blocks of
  // `block_size` bytes programmed in units of `prog_size` (for sizing a
  // partition: a queue of N such reports needs 2 + ceil(N / this) + 1 blocks).
  static uint32_t reports_per_segment(uint32_t block_size, uint32_t prog_size,
                                      uint32_t report_size);
  // kOk if a report of `report_size` bytes can be appended now, else
  // kQueueFull (every other segment holds unacknowledged reports) or
  // kInvalidArgument (larger than max_report_size()). Writes nothing.
  Status has_room(size_t report_size) const;

  // Appends a report (durable: programmed, synced, read back) with its id,
  // which must be above every id appended before.
  Status append(uint64_t report_id, const uint8_t* report, size_t report_size);

  // The oldest unacknowledged reports as a blur.ReportBatch (at most
  // max_reports, as many as fit in `capacity`). *count = 0 when nothing is
  // pending; otherwise *last_id is the id to acknowledge once the
  // collector has stored the batch.
  Status pending_batch(uint64_t device_nonce, size_t max_reports, uint8_t* buffer, size_t capacity,
                       size_t* written, size_t* count, uint64_t* last_id) const;

  // Marks every report with an id <= last_id acknowledged (durably).
  Status acknowledge(uint64_t last_id);

  bool is_open() const { return open_; }
  uint32_t pending_count() const { return pending_; }
  uint64_t ack_floor() const { return ack_floor_; }

 private:
  struct Scan;
  struct AckScan;
  struct Batch;
  // scan_log's callbacks (flash_write.h): segment entries, acknowledgements.
  static uint32_t entry_record_span(void* scan, const uint8_t* entry, uint32_t* body);
  static Status visit_entry(void* scan, const uint8_t* entry, uint32_t offset, uint32_t body);
  static Status visit_ack(void* scan, const uint8_t* record, uint32_t offset, uint32_t body);
  // Reads segment `index`: its header and valid entries, counting the
  // pending ones; with a batch, also copies them into it while it has room.
  Status scan_block(uint32_t index, Scan* out, Batch* batch = nullptr) const;
  Status copy_to_batch(uint32_t block, uint32_t offset, uint32_t length, uint64_t id,
                       Batch* batch) const;
  Status rotate();
  Status open_ack_log();
  Status count_pending();
  Status write_ack_record(uint64_t floor);
  uint32_t segment_count() const { return segments_.block_count; }
  uint32_t segment_block(uint32_t index) const { return segments_.block(index); }
  // Flash taken by an entry with a `length`-byte report in a segment of `format`.
  uint32_t entry_span(uint32_t length, uint32_t format) const;
  Status next_segment(uint32_t* next) const;

  Port port_{};
  bool open_ = false;
  BlockLog acks_;      // the acknowledgement log: the partition's first two blocks
  BlockLog segments_;  // the report segments (their sequence: the active one's)
  uint32_t active_format_ = 0;
  uint64_t ack_floor_ = 0;
  uint64_t last_report_id_ = 0;
  bool has_report_ = false;
  uint32_t pending_ = 0;
};

}  // namespace blur

#endif  // BLUR_REPORT_QUEUE_H
