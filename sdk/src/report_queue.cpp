#include "blur/storage/report_queue.h"

#include <string.h>

#include "blur/report/report_encoding.h"
#include "blur/storage/crc32.h"
#include "flash_write.h"
#include "little_endian.h"

namespace blur {

namespace {

constexpr uint32_t kMagic = 0x51524C42;     // "BLRQ"
constexpr uint32_t kAckMagic = 0x41524C42;  // "BLRA"
constexpr uint32_t kFormat = 2;             // records in whole program units
// Format 1 (byte-programmable flash only): the same records, each entry
// padded to 4 bytes. Still read, so reports queued before an update are sent.
constexpr uint32_t kLegacyFormat = 1;
constexpr uint8_t kReportEntry = 1;
constexpr uint32_t kEntryHeaderSize = 16;
constexpr uint32_t kSegmentHeaderBody = 12;  // magic | format | segment_sequence
constexpr uint32_t kAckBody = 16;            // magic | sequence | ack_floor

}  // namespace

struct ReportQueue::Scan {
  bool valid;            // the segment header is intact
  uint32_t format;
  uint32_t sequence;     // of the segment
  uint32_t end;          // offset after the last valid entry
  bool sealed;           // a torn entry follows the last valid one
  uint32_t pending;      // report entries with id >= ack_floor_
  uint64_t last_report;  // largest report id in the segment
  bool has_report;
};

// The blur.ReportBatch pending_batch() is filling.
struct ReportQueue::Batch {
  uint8_t* buffer;
  size_t capacity;
  size_t length;  // bytes written
  size_t max_reports;
  size_t count;
  uint64_t last_id;
  bool full;  // later reports wait for the next batch
};

// Copies a report from flash straight into the batch behind its field
// header (ReportBatch.reports = 3, length-delimited; the length varint has
// at most 3 bytes, entries being < 64 KiB).
Status ReportQueue::copy_to_batch(uint32_t block, uint32_t offset, uint32_t length, uint64_t id,
                                  Batch* batch) const {
  uint8_t field[4];
  size_t prefix = 0;
  field[prefix++] = 0x1A;
  for (uint32_t v = length;; v >>= 7) {
    field[prefix++] = static_cast<uint8_t>(v >= 0x80 ? (v & 0x7F) | 0x80 : v);
    if (v < 0x80) break;
  }
  if (prefix + length > batch->capacity - batch->length) {
    batch->full = true;
    return Status::kOk;
  }
  uint8_t* out = batch->buffer + batch->length;
  memcpy(out, field, prefix);
  if (port_.read(port_.context, block, offset + kEntryHeaderSize, out + prefix, length) !=
      Status::kOk) {
    return Status::kStorageFailure;
  }
  batch->length += prefix + length;
  batch->last_id = id;
  batch->full = ++batch->count == batch->max_reports;
  return Status::kOk;
}

Status ReportQueue::scan_block(uint32_t index, Scan* out, Batch* batch) const {
  const uint32_t block = segment_block(index);
  *out = Scan{false, 0, 0, 0, false, 0, 0, false};
  RecordState state;
  BLUR_TRY(check_record(port_, block, 0, kSegmentHeaderBody, &state));
  uint8_t header[kSegmentHeaderBody];
  if (state != RecordState::kValid ||
      port_.read(port_.context, block, 0, header, sizeof header) != Status::kOk) {
    return state == RecordState::kValid ? Status::kStorageFailure : Status::kOk;
  }
  out->format = load_le32(header + 4);
  if (load_le32(header) != kMagic || (out->format != kFormat && out->format != kLegacyFormat)) {
    return Status::kOk;  // not a segment: it holds nothing
  }
  out->valid = true;
  out->sequence = load_le32(header + 8);
  const uint32_t block_size = port_.block_size;
  uint32_t offset = record_span(port_, kSegmentHeaderBody);
  while (offset + record_span(port_, kEntryHeaderSize + 1) <= block_size) {
    uint8_t entry[kEntryHeaderSize];
    if (port_.read(port_.context, block, offset, entry, sizeof entry) != Status::kOk) {
      return Status::kStorageFailure;
    }
    if (is_erased(entry, sizeof entry, port_.erase_value)) break;  // the end of the log
    const uint32_t length = static_cast<uint32_t>(entry[2]) | static_cast<uint32_t>(entry[3]) << 8;
    const uint32_t size = entry_span(length, out->format);
    if (entry[0] != kReportEntry || length == 0 || size > block_size - offset) {
      out->sealed = true;  // torn header: nothing valid follows in this segment
      break;
    }
    BLUR_TRY(check_record(port_, block, offset, kEntryHeaderSize + length, &state));
    if (state != RecordState::kValid) {
      out->sealed = true;  // torn body or CRC
      break;
    }
    const uint64_t id = load_le64(entry + 8);
    // The largest id (ids increase, but flash may say otherwise: found by
    // report_queue_storage_fuzz, a larger id earlier in a segment let an
    // append reuse ids).
    if (!out->has_report || id > out->last_report) out->last_report = id;
    out->has_report = true;
    if (id >= ack_floor_) {
      ++out->pending;
      if (batch != nullptr && !batch->full) {
        BLUR_TRY(copy_to_batch(block, offset, length, id, batch));
      }
    }
    offset += size;
  }
  out->end = offset;
  // Appends continue here only if everything after the log is erased (a
  // torn program may leave programmed units past an erased-looking start).
  if (!out->sealed && offset < block_size) {
    bool erased = false;
    BLUR_TRY(flash_erased(port_, block, offset, block_size - offset, &erased));
    out->sealed = !erased;
  }
  return Status::kOk;
}

uint32_t ReportQueue::entry_span(uint32_t length, uint32_t format) const {
  return format == kLegacyFormat ? (kEntryHeaderSize + length + 4 + 3) & ~3u
                                 : record_span(port_, kEntryHeaderSize + length);
}

Status ReportQueue::open(const Port& port, Partition partition) {
  open_ = false;
  const uint32_t first_block = partition.first_block;
  const uint32_t block_count = partition.block_count;
  if (!storage_geometry_ok(port) || !partition_fits(port, partition, 3) ||
      block_count > kMaxBlocks || port.block_size > 65536 ||
      port.block_size < record_span(port, kSegmentHeaderBody) +
                            record_span(port, kEntryHeaderSize + kMinReportRoom)) {
    return Status::kInvalidArgument;
  }
  port_ = port;
  first_block_ = first_block;
  block_count_ = block_count;
  has_active_ = false;
  ack_floor_ = 0;
  has_report_ = false;
  last_report_id_ = 0;
  BLUR_TRY(open_ack_log());
  // Pass 1: the newest segment and the last report id.
  Scan scan;
  for (uint32_t i = 0; i < segment_count(); ++i) {
    BLUR_TRY(scan_block(i, &scan));
    if (!scan.valid) continue;
    if (scan.has_report && (!has_report_ || scan.last_report > last_report_id_)) {
      last_report_id_ = scan.last_report;
      has_report_ = true;
    }
    if (!has_active_ || sequence_newer(scan.sequence, active_sequence_)) {
      has_active_ = true;
      active_ = i;
      active_sequence_ = scan.sequence;
      active_format_ = scan.format;
      write_offset_ = scan.sealed ? port_.block_size : scan.end;
    }
  }
  // Pass 2: what is still pending under the floor.
  BLUR_TRY(count_pending());
  open_ = true;
  return Status::kOk;
}

Status ReportQueue::count_pending() {
  uint32_t pending = 0;
  for (uint32_t i = 0; i < segment_count(); ++i) {
    Scan scan;
    BLUR_TRY(scan_block(i, &scan));
    if (scan.valid) pending += scan.pending;
  }
  pending_ = pending;
  return Status::kOk;
}

// The acknowledgement log: the newest valid record in either block.
Status ReportQueue::open_ack_log() {
  has_ack_ = false;
  ack_block_ = 0;
  ack_offset_ = 0;
  const uint32_t span = record_span(port_, kAckBody);
  for (uint32_t b = 0; b < 2; ++b) {
    const uint32_t block = first_block_ + b;
    uint32_t offset = 0;
    bool sealed = false;
    bool newest_here = false;
    for (; offset + span <= port_.block_size; offset += span) {
      RecordState state;
      BLUR_TRY(check_record(port_, block, offset, kAckBody, &state));
      if (state == RecordState::kErased) break;
      uint8_t record[kAckBody];
      if (state == RecordState::kValid &&
          port_.read(port_.context, block, offset, record, sizeof record) != Status::kOk) {
        return Status::kStorageFailure;
      }
      if (state == RecordState::kInvalid || load_le32(record) != kAckMagic) {
        sealed = true;  // torn: the rest of this block is not used
        break;
      }
      const uint32_t sequence = load_le32(record + 4);
      if (!has_ack_ || sequence_newer(sequence, ack_sequence_)) {
        has_ack_ = true;
        ack_sequence_ = sequence;
        ack_floor_ = load_le64(record + 8);
        ack_block_ = b;
        newest_here = true;
      }
    }
    if (!sealed && offset < port_.block_size) {
      bool erased = false;
      BLUR_TRY(flash_erased(port_, block, offset, port_.block_size - offset, &erased));
      sealed = !erased;
    }
    if (newest_here) ack_offset_ = sealed ? port_.block_size : offset;
  }
  return Status::kOk;
}

Status ReportQueue::write_ack_record(uint64_t floor) {
  const uint32_t span = record_span(port_, kAckBody);
  if (!has_ack_ || ack_offset_ + span > port_.block_size) {
    // Continue in the other block (or start the log): erase it first. The
    // block in use keeps the previous floor until the new record is valid.
    const uint32_t next = has_ack_ ? 1 - ack_block_ : 0;
    const Status erased = storage_status(port_.erase(port_.context, first_block_ + next));
    if (erased != Status::kOk) {
      open_ = false;
      return erased;
    }
    ack_block_ = next;
    ack_offset_ = 0;
  }
  const uint32_t sequence = has_ack_ ? ack_sequence_ + 1 : 1;
  uint8_t record[kAckBody];
  store_le32(record, kAckMagic);
  store_le32(record + 4, sequence);
  store_le64(record + 8, floor);
  const uint32_t offset = ack_offset_;
  ack_offset_ = port_.block_size;  // sealed until this record is known good
  const Status status = write_record(port_, first_block_ + ack_block_, offset, record, sizeof record);
  if (status != Status::kOk) {
    open_ = false;
    return status;
  }
  has_ack_ = true;
  ack_sequence_ = sequence;
  ack_offset_ = offset + span;
  return Status::kOk;
}

uint32_t ReportQueue::reports_per_segment(uint32_t block_size, uint32_t prog_size,
                                          uint32_t report_size) {
  Port geometry{};
  geometry.block_size = block_size;
  geometry.prog_size = prog_size;
  const uint32_t header = record_span(geometry, kSegmentHeaderBody);
  return block_size < header ? 0
                             : (block_size - header) /
                                   record_span(geometry, kEntryHeaderSize + report_size);
}

uint32_t ReportQueue::max_report_size() const {
  const uint32_t room = port_.block_size - record_span(port_, kSegmentHeaderBody) -
                        unit_align(port_, 4) - kEntryHeaderSize;
  return room > 0xFFFF ? 0xFFFF : room;
}

bool ReportQueue::segment_free(uint32_t index, bool* reusable) const {
  Scan scan;
  if (scan_block(index, &scan) != Status::kOk) return false;
  *reusable = !scan.valid || scan.pending == 0;
  return true;
}

Status ReportQueue::has_room(size_t report_size) const {
  if (!open_) return Status::kInvalidArgument;
  if (report_size == 0 || report_size > max_report_size()) return Status::kInvalidArgument;
  if (has_active_ &&
      write_offset_ + entry_span(static_cast<uint32_t>(report_size), kFormat) <= port_.block_size) {
    return Status::kOk;
  }
  const uint32_t next = has_active_ ? (active_ + 1) % segment_count() : 0;
  bool reusable = false;
  if (!segment_free(next, &reusable)) return Status::kStorageFailure;
  return reusable ? Status::kOk : Status::kQueueFull;
}

// Starts the next segment: erase it (it holds no pending report) and write
// its header.
Status ReportQueue::rotate() {
  const uint32_t next = has_active_ ? (active_ + 1) % segment_count() : 0;
  bool reusable = false;
  if (!segment_free(next, &reusable)) return Status::kStorageFailure;
  if (!reusable) return Status::kQueueFull;
  const uint32_t sequence = has_active_ ? active_sequence_ + 1 : 1;
  uint8_t header[kSegmentHeaderBody];
  store_le32(header, kMagic);
  store_le32(header + 4, kFormat);
  store_le32(header + 8, sequence);
  const uint32_t block = segment_block(next);
  Status status = storage_status(port_.erase(port_.context, block));
  if (status == Status::kOk) status = write_record(port_, block, 0, header, sizeof header);
  if (status != Status::kOk) {
    open_ = false;
    return status;
  }
  has_active_ = true;
  active_ = next;
  active_sequence_ = sequence;
  active_format_ = kFormat;
  write_offset_ = record_span(port_, kSegmentHeaderBody);
  return Status::kOk;
}

Status ReportQueue::append(uint64_t report_id, const uint8_t* report, size_t report_size) {
  if (!open_) return Status::kInvalidArgument;
  if (report == nullptr || report_size == 0 || report_size > max_report_size() ||
      (has_report_ && report_id <= last_report_id_) || report_id < ack_floor_) {
    return Status::kInvalidArgument;
  }
  const uint32_t size = static_cast<uint32_t>(report_size);
  // A legacy segment is never appended to: its padding differs.
  if (has_active_ && active_format_ != kFormat) write_offset_ = port_.block_size;
  const uint32_t total = entry_span(size, kFormat);
  if (!has_active_ || write_offset_ + total > port_.block_size) BLUR_TRY(rotate());
  const uint32_t block = segment_block(active_);
  uint8_t header[kEntryHeaderSize];
  memset(header, 0, sizeof header);
  header[0] = kReportEntry;
  header[2] = static_cast<uint8_t>(size);
  header[3] = static_cast<uint8_t>(size >> 8);
  store_le64(header + 8, report_id);
  const uint32_t offset = write_offset_;
  write_offset_ = port_.block_size;  // sealed until this entry is known good
  RecordWriter writer(port_, block, offset);
  Status status = writer.append(header, sizeof header);
  if (status == Status::kOk) status = writer.append(report, size);
  if (status == Status::kOk) status = writer.commit();
  if (status != Status::kOk) {
    open_ = false;
    return status;
  }
  write_offset_ = offset + total;
  last_report_id_ = report_id;
  has_report_ = true;
  ++pending_;
  return Status::kOk;
}

Status ReportQueue::acknowledge(uint64_t last_id) {
  if (!open_) return Status::kInvalidArgument;
  if (last_id < ack_floor_) return Status::kOk;  // already acknowledged
  if (!has_report_ || last_id > last_report_id_) return Status::kInvalidArgument;
  BLUR_TRY(write_ack_record(last_id + 1));
  ack_floor_ = last_id + 1;
  return count_pending();  // the acknowledged prefix may span segments
}

Status ReportQueue::pending_batch(uint64_t device_nonce, size_t max_reports, uint8_t* buffer,
                                  size_t capacity, size_t* written, size_t* count,
                                  uint64_t* last_id) const {
  if (!open_ || written == nullptr || count == nullptr || last_id == nullptr || max_reports == 0) {
    return Status::kInvalidArgument;
  }
  *count = 0;
  Batch batch{buffer, capacity, 0, max_reports, 0, 0, false};
  BLUR_TRY(begin_encoded_batch(device_nonce, buffer, capacity, &batch.length));
  // Segments oldest first: the one after the active segment, around the ring.
  for (uint32_t step = 1; step <= segment_count() && !batch.full; ++step) {
    Scan scan;
    BLUR_TRY(scan_block((active_ + step) % segment_count(), &scan, &batch));
  }
  *written = batch.length;
  *count = batch.count;
  if (batch.count > 0) *last_id = batch.last_id;
  return Status::kOk;
}

}  // namespace blur
