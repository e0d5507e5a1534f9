#include "flash_write.h"

#include <string.h>

#include "blur/storage/crc32.h"
#include "little_endian.h"
#include "mbedtls/platform_util.h"

namespace blur {

namespace {
constexpr uint32_t kChunk = 32;  // bytes per read: stack, not RAM buffers

bool power_of_two(uint32_t x) { return x != 0 && (x & (x - 1)) == 0; }
}  // namespace

bool storage_geometry_ok(const Port& port) {
  return port.read != nullptr && port.prog != nullptr && port.erase != nullptr &&
         port.sync != nullptr && power_of_two(port.prog_size) &&
         port.prog_size <= BLUR_MAX_PROG_SIZE && port.block_size % port.prog_size == 0 &&
         (port.erase_value == 0xFF || port.erase_value == 0x00) &&
         (port.counter_read == nullptr) == (port.counter_advance == nullptr);
}

bool partition_fits(const Port& port, Partition partition, uint32_t min_blocks) {
  return partition.block_count >= min_blocks && partition.first_block <= port.block_count &&
         partition.block_count <= port.block_count - partition.first_block;
}

RecordWriter::RecordWriter(const Port& port, uint32_t block, uint32_t offset)
    : port_(port), block_(block), start_(offset), offset_(offset), crc_(crc32_start()) {}

RecordWriter::~RecordWriter() { mbedtls_platform_zeroize(stage_, sizeof stage_); }

// Programs stage_[0..size) (whole units) at offset_.
void RecordWriter::flush(uint32_t size) {
  if (status_ == Status::kOk && size > 0) {
    status_ = storage_status(port_.prog(port_.context, block_, offset_, stage_, size));
    offset_ += size;
  }
  staged_ = 0;
}

Status RecordWriter::append(const uint8_t* data, uint32_t size) {
  crc_ = crc32_update(crc_, data, size);
  body_size_ += size;
  while (size > 0 && status_ == Status::kOk) {
    const uint32_t n = size < kStageSize - staged_ ? size : kStageSize - staged_;
    memcpy(stage_ + staged_, data, n);
    staged_ += n;
    data += n;
    size -= n;
    if (staged_ == kStageSize) flush(kStageSize);
  }
  return status_;
}

Status RecordWriter::commit() {
  // The body's last unit, padded with the erased value.
  const uint32_t padded = unit_align(port_, staged_);
  memset(stage_ + staged_, port_.erase_value, padded - staged_);
  flush(padded);
  // The commit unit, programmed on its own after the whole body.
  const uint32_t crc = crc32_finish(crc_);
  const uint32_t commit_size = unit_align(port_, 4);
  memset(stage_, port_.erase_value, commit_size);
  store_le32(stage_, crc);
  const uint32_t commit_offset = offset_;
  flush(commit_size);
  if (status_ != Status::kOk) return status_;
  if (port_.sync(port_.context) != Status::kOk) return status_ = Status::kStorageFailure;
  // Read back: the body's CRC and the commit unit. A mismatch with the power
  // on means the block does not hold what it was given: it is worn.
  uint32_t stored_crc = 0;
  uint8_t mark[4];
  if (crc_of_flash(port_, block_, start_, body_size_, &stored_crc) != Status::kOk ||
      port_.read(port_.context, block_, commit_offset, mark, sizeof mark) != Status::kOk) {
    return status_ = Status::kStorageFailure;
  }
  if (stored_crc != crc || load_le32(mark) != crc) status_ = Status::kStorageWornOut;
  return status_;
}

Status append_record(const Port& port, uint32_t block, uint32_t* offset, const uint8_t* head,
                     uint32_t head_size, const uint8_t* tail, uint32_t tail_size) {
  const uint32_t at = *offset;
  *offset = port.block_size;
  RecordWriter writer(port, block, at);
  Status status = writer.append(head, head_size);
  if (status == Status::kOk) status = writer.append(tail, tail_size);
  if (status == Status::kOk) status = writer.commit();
  if (status == Status::kOk) *offset = at + record_span(port, head_size + tail_size);
  return status;
}

Status check_record(const Port& port, uint32_t block, uint32_t offset, uint32_t body_size,
                    RecordState* state) {
  bool erased = false;
  BLUR_TRY(flash_erased(port, block, offset, record_span(port, body_size), &erased));
  if (erased) {
    *state = RecordState::kErased;
    return Status::kOk;
  }
  uint8_t mark[4];
  uint32_t crc = 0;
  BLUR_TRY(crc_of_flash(port, block, offset, body_size, &crc));
  if (port.read(port.context, block, offset + unit_align(port, body_size), mark, sizeof mark) !=
      Status::kOk) {
    return Status::kStorageFailure;
  }
  *state = load_le32(mark) == crc ? RecordState::kValid : RecordState::kInvalid;
  return Status::kOk;
}

Status scan_log(const Port& port, uint32_t block, uint32_t offset, uint32_t head_size,
                const LogVisitor& visitor, uint32_t* end) {
  const uint32_t block_size = port.block_size;
  bool sealed = false;
  while (offset + record_span(port, head_size) <= block_size) {
    uint8_t head[kMaxLogHead];
    if (port.read(port.context, block, offset, head, head_size) != Status::kOk) {
      return Status::kStorageFailure;
    }
    if (is_erased(head, head_size, port.erase_value)) break;  // the end of the log
    uint32_t body = head_size;
    const uint32_t span =
        visitor.span != nullptr ? visitor.span(visitor.context, head, &body) : record_span(port, body);
    RecordState state = RecordState::kInvalid;
    if (span != 0 && span <= block_size - offset) {
      BLUR_TRY(check_record(port, block, offset, body, &state));
    }
    if (state != RecordState::kValid) {
      sealed = true;  // torn: nothing valid follows in this block
      break;
    }
    const Status visited = visitor.visit(visitor.context, head, offset, body);
    if (visited != Status::kOk) {
      *end = block_size;
      return visited;
    }
    offset += span;
  }
  // Appends continue here only if everything after the log is erased (a
  // torn program may leave programmed units past an erased-looking start).
  if (!sealed && offset < block_size) {
    bool erased = false;
    BLUR_TRY(flash_erased(port, block, offset, block_size - offset, &erased));
    sealed = !erased;
  }
  *end = sealed ? block_size : offset;
  return Status::kOk;
}

Status crc_of_flash(const Port& port, uint32_t block, uint32_t offset, uint32_t size,
                    uint32_t* crc) {
  uint32_t state = crc32_start();
  uint8_t chunk[kChunk];
  for (uint32_t done = 0; done < size;) {
    const uint32_t n = size - done < kChunk ? size - done : kChunk;
    if (port.read(port.context, block, offset + done, chunk, n) != Status::kOk) {
      return Status::kStorageFailure;
    }
    state = crc32_update(state, chunk, n);
    done += n;
  }
  *crc = crc32_finish(state);
  return Status::kOk;
}

bool is_erased(const uint8_t* bytes, size_t length, uint8_t erase_value) {
  for (size_t i = 0; i < length; ++i) {
    if (bytes[i] != erase_value) return false;
  }
  return true;
}

Status flash_erased(const Port& port, uint32_t block, uint32_t offset, uint32_t size,
                    bool* erased) {
  uint8_t chunk[kChunk];
  *erased = true;
  for (uint32_t done = 0; done < size && *erased;) {
    const uint32_t n = size - done < kChunk ? size - done : kChunk;
    if (port.read(port.context, block, offset + done, chunk, n) != Status::kOk) {
      return Status::kStorageFailure;
    }
    *erased = is_erased(chunk, n, port.erase_value);
    done += n;
  }
  return Status::kOk;
}

}  // namespace blur
