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
static_assert(kEntryHeaderSize <= kMaxLogHead && kAckBody <= kMaxLogHead, "scan_log's heads");

}  // namespace

struct ReportQueue::Scan {
  bool valid;            // the segment header is intact
  uint32_t format;
  uint32_t sequence;     // of the segment
  uint32_t end;          // where appends continue; block_size: sealed (scan_log)
  uint32_t pending;      // report entries with id >= ack_floor_
  uint64_t last_report;  // largest report id in the segment
  bool has_report;
  const ReportQueue* queue;
  uint32_t block;
  Batch* batch;  // pending reports are copied into it while it has room, if any
};

struct ReportQueue::AckScan {
  ReportQueue* queue;
  uint32_t block;    // 0 or 1
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
  const uint32_t prefix = 2 + (length >= 0x80 ? 1 : 0) + (length >= 0x4000 ? 1 : 0);
  if (prefix + length > batch->capacity - batch->length) {
    batch->full = true;
    return Status::kOk;
  }
  uint8_t* out = batch->buffer + batch->length;
  *out++ = 0x1A;
  uint32_t v = length;
  for (; v >= 0x80; v >>= 7) *out++ = static_cast<uint8_t>(v | 0x80);
  *out++ = static_cast<uint8_t>(v);
  if (port_.read(port_.context, block, offset + kEntryHeaderSize, out, length) != Status::kOk) {
    return Status::kStorageFailure;
  }
  batch->length += prefix + length;
  batch->last_id = id;
  batch->full = ++batch->count == batch->max_reports;
  return Status::kOk;
}

Status ReportQueue::scan_block(uint32_t index, Scan* out, Batch* batch) const {
  const uint32_t block = segment_block(index);
  *out = Scan{false, 0, 0, 0, 0, 0, false, this, block, batch};
  // A torn, corrupt or erased header: the block holds nothing.
  const Status checked = check_record(port_, block, 0, kSegmentHeaderBody);
  if (checked != Status::kOk) return checked == Status::kStorageCorrupt ? Status::kOk : checked;
  uint8_t header[kSegmentHeaderBody];
  if (port_.read(port_.context, block, 0, header, sizeof header) != Status::kOk) {
    return Status::kStorageFailure;
  }
  out->format = load_le32(header + 4);
  if (load_le32(header) != kMagic || (out->format != kFormat && out->format != kLegacyFormat)) {
    return Status::kOk;  // not a segment: it holds nothing
  }
  out->valid = true;
  out->sequence = load_le32(header + 8);
  const LogVisitor entries{&ReportQueue::entry_record_span, &ReportQueue::visit_entry, out};
  return scan_log(port_, block, record_span(port_, kSegmentHeaderBody), kEntryHeaderSize, entries,
                  &out->end);
}

// An entry's body (its header and report) and span; 0: a torn header.
uint32_t ReportQueue::entry_record_span(void* context, const uint8_t* entry, uint32_t* body) {
  const Scan& scan = *static_cast<Scan*>(context);
  const uint32_t length = static_cast<uint32_t>(entry[2]) | static_cast<uint32_t>(entry[3]) << 8;
  if (entry[0] != kReportEntry || length == 0) return 0;
  *body = kEntryHeaderSize + length;
  return scan.queue->entry_span(length, scan.format);
}

Status ReportQueue::visit_entry(void* context, const uint8_t* entry, uint32_t offset,
                                uint32_t body) {
  Scan& scan = *static_cast<Scan*>(context);
  const uint64_t id = load_le64(entry + 8);
  // The largest id (ids increase, but flash may say otherwise: found by
  // report_queue_storage_fuzz, a larger id earlier in a segment let an
  // append reuse ids).
  if (!scan.has_report || id > scan.last_report) scan.last_report = id;
  scan.has_report = true;
  if (id >= scan.queue->ack_floor_) {
    ++scan.pending;
    if (scan.batch != nullptr && !scan.batch->full) {
      return scan.queue->copy_to_batch(scan.block, offset, body - kEntryHeaderSize, id, scan.batch);
    }
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
  if (!storage_fits(port, partition, 3,
                    record_span(port, kSegmentHeaderBody) +
                        record_span(port, kEntryHeaderSize + kMinReportRoom)) ||
      block_count > kMaxBlocks || port.block_size > 65536) {
    return Status::kInvalidArgument;
  }
  port_ = port;
  acks_.reset(Partition{first_block, 2});
  segments_.reset(Partition{first_block + 2, block_count - 2});
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
    if (segments_.consider(i, scan.sequence, scan.end)) active_format_ = scan.format;
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
  for (uint32_t b = 0; b < 2; ++b) {
    AckScan scan{this, b};
    uint32_t end = 0;
    const Status status = scan_log(port_, acks_.block(b), 0, kAckBody,
                                   LogVisitor{nullptr, &ReportQueue::visit_ack, &scan}, &end);
    // (A CRC-valid record without the magic seals the block: not an error.)
    if (status != Status::kOk && status != Status::kStorageCorrupt) return status;
    if (acks_.has_active && acks_.active == b) acks_.offset = end;  // the newest record is here
  }
  return Status::kOk;
}

Status ReportQueue::visit_ack(void* context, const uint8_t* record, uint32_t, uint32_t) {
  AckScan& scan = *static_cast<AckScan*>(context);
  ReportQueue& q = *scan.queue;
  if (load_le32(record) != kAckMagic) return Status::kStorageCorrupt;
  const uint32_t sequence = load_le32(record + 4);
  if (q.acks_.consider(scan.block, sequence, 0)) q.ack_floor_ = load_le64(record + 8);
  return Status::kOk;
}

Status ReportQueue::write_ack_record(uint64_t floor) {
  // Continue in the other block (or start the log) when this one is full.
  // The block in use keeps the previous floor until the new record is valid.
  const uint32_t sequence = acks_.sequence + 1;  // 1 for the first (reset() zeroes it)
  Status status = Status::kOk;
  if (!acks_.has_room(port_, record_span(port_, kAckBody))) status = acks_.move_on(port_);
  uint8_t record[kAckBody];
  store_le32(record, kAckMagic);
  store_le32(record + 4, sequence);
  store_le64(record + 8, floor);
  if (status == Status::kOk) status = acks_.append(port_, record, sizeof record);
  if (status != Status::kOk) {
    open_ = false;
    return status;
  }
  acks_.sequence = sequence;
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

// The segment appends move to after the active one: kOk if it holds no
// pending report (it may be erased), kQueueFull, or kStorageFailure.
Status ReportQueue::next_segment(uint32_t* next) const {
  *next = segments_.next();
  Scan scan;
  BLUR_TRY(scan_block(*next, &scan));
  return !scan.valid || scan.pending == 0 ? Status::kOk : Status::kQueueFull;
}

Status ReportQueue::has_room(size_t report_size) const {
  if (!open_) return Status::kInvalidArgument;
  if (report_size == 0 || report_size > max_report_size()) return Status::kInvalidArgument;
  if (segments_.has_room(port_, entry_span(static_cast<uint32_t>(report_size), kFormat))) {
    return Status::kOk;
  }
  uint32_t next = 0;
  return next_segment(&next);
}

// Starts the next segment: erase it (it holds no pending report) and write
// its header.
Status ReportQueue::rotate() {
  uint32_t next = 0;
  BLUR_TRY(next_segment(&next));
  const uint32_t sequence = segments_.sequence + 1;  // 1 for the first (reset() zeroes it)
  uint8_t header[kSegmentHeaderBody];
  store_le32(header, kMagic);
  store_le32(header + 4, kFormat);
  store_le32(header + 8, sequence);
  Status status = segments_.move_on(port_);
  if (status == Status::kOk) status = segments_.append(port_, header, sizeof header);
  if (status != Status::kOk) {
    open_ = false;
    return status;
  }
  segments_.sequence = sequence;
  active_format_ = kFormat;
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
  if (active_format_ != kFormat) segments_.offset = port_.block_size;
  if (!segments_.has_room(port_, entry_span(size, kFormat))) BLUR_TRY(rotate());
  uint8_t header[kEntryHeaderSize];
  memset(header, 0, sizeof header);
  header[0] = kReportEntry;
  header[2] = static_cast<uint8_t>(size);
  header[3] = static_cast<uint8_t>(size >> 8);
  store_le64(header + 8, report_id);
  const Status status = segments_.append(port_, header, sizeof header, report, size);
  if (status != Status::kOk) {
    open_ = false;
    return status;
  }
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
    BLUR_TRY(scan_block((segments_.active + step) % segment_count(), &scan, &batch));
  }
  *written = batch.length;
  *count = batch.count;
  if (batch.count > 0) *last_id = batch.last_id;
  return Status::kOk;
}

}  // namespace blur
