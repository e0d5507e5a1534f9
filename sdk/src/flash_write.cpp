#include "flash_write.h"

#include <string.h>

#include "blur/storage/block_log.h"
#include "blur/storage/crc32.h"
#include "little_endian.h"
#include "mbedtls/platform_util.h"

namespace blur {

namespace {
constexpr uint32_t kChunk = 32;  // bytes per read: stack, not RAM buffers

bool power_of_two(uint32_t x) { return x != 0 && (x & (x - 1)) == 0; }
}  // namespace

bool storage_fits(const Port& port, Partition partition, uint32_t min_blocks,
                  uint32_t min_block_size) {
  return port.read != nullptr && port.prog != nullptr && port.erase != nullptr &&
         port.sync != nullptr && power_of_two(port.prog_size) &&
         port.prog_size <= BLUR_MAX_PROG_SIZE && port.block_size % port.prog_size == 0 &&
         port.block_size >= min_block_size &&
         (port.erase_value == 0xFF || port.erase_value == 0x00) &&
         (port.counter_read == nullptr) == (port.counter_advance == nullptr) &&
         partition.block_count >= min_blocks && partition.first_block <= port.block_count &&
         partition.block_count <= port.block_count - partition.first_block;
}

namespace {
// CRC-32 of `size` bytes at `offset` of `block`, read in small chunks.
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

// Whether `size` bytes at `offset` of `block` are all erased.
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

// The CRC of the `body_size` bytes at (block, offset) and the one stored at
// `mark_at` (0: in its commit unit, after the body's units).
Status stored_crcs(const Port& port, uint32_t block, uint32_t offset, uint32_t body_size,
                   uint32_t mark_at, uint32_t* body_crc, uint32_t* mark) {
  uint8_t bytes[4];
  BLUR_TRY(crc_of_flash(port, block, offset, body_size, body_crc));
  if (mark_at == 0) mark_at = offset + unit_align(port, body_size);
  if (port.read(port.context, block, mark_at, bytes, sizeof bytes) != Status::kOk) {
    return Status::kStorageFailure;
  }
  *mark = load_le32(bytes);
  return Status::kOk;
}
}  // namespace

Status append_record(const Port& port, uint32_t block, uint32_t* offset, const uint8_t* head,
                     uint32_t head_size, const uint8_t* tail, uint32_t tail_size) {
  // The record's bytes (body, erased padding, commit unit) go through a
  // stage so that every program covers whole aligned units (and, for small
  // units, several at once); the stage is wiped after (it may hold the
  // device secret). A program ends at the stage's end, at the body's last
  // unit (the commit unit goes on its own, last) and at the record's end.
  constexpr uint32_t kStageSize = BLUR_MAX_PROG_SIZE < 32 ? 32 : BLUR_MAX_PROG_SIZE;
  uint8_t stage[kStageSize];
  const uint32_t at = *offset;
  *offset = port.block_size;  // sealed until the record is known good
  const uint32_t body_size = head_size + tail_size;
  const uint32_t crc =
      crc32_finish(crc32_update(crc32_update(crc32_start(), head, head_size), tail, tail_size));
  const uint32_t padded = unit_align(port, body_size);
  const uint32_t total = padded + unit_align(port, 4);
  Status status = Status::kOk;
  uint32_t staged = 0;
  for (uint32_t i = 0; i < total && status == Status::kOk; ++i) {
    uint8_t byte = port.erase_value;
    if (i < head_size) {
      byte = head[i];
    } else if (i < body_size) {
      byte = tail[i - head_size];
    } else if (i - padded < 4) {  // (unsigned: false before the commit unit)
      byte = static_cast<uint8_t>(crc >> 8 * (i - padded));
    }
    stage[staged++] = byte;
    if (staged == kStageSize || i + 1 == padded || i + 1 == total) {
      status = storage_status(port.prog(port.context, block, at + i + 1 - staged, stage, staged));
      staged = 0;
    }
  }
  mbedtls_platform_zeroize(stage, sizeof stage);
  if (status != Status::kOk) return status;
  if (port.sync(port.context) != Status::kOk) return Status::kStorageFailure;
  // Read back: the body's CRC and the commit unit. A mismatch with the power
  // on means the block does not hold what it was given: it is worn.
  uint32_t stored = 0, mark = 0;
  if (stored_crcs(port, block, at, body_size, 0, &stored, &mark) != Status::kOk) {
    return Status::kStorageFailure;
  }
  if (stored != crc || mark != crc) return Status::kStorageWornOut;
  *offset = at + total;
  return Status::kOk;
}

Status check_record(const Port& port, uint32_t block, uint32_t offset, uint32_t body_size,
                    uint32_t mark_at) {
  uint32_t crc = 0, mark = 0;
  BLUR_TRY(stored_crcs(port, block, offset, body_size, mark_at, &crc, &mark));
  return mark == crc ? Status::kOk : Status::kStorageCorrupt;
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
    // (The head is not erased, so neither is the record: its CRC decides.)
    const Status checked = span != 0 && span <= block_size - offset
                               ? check_record(port, block, offset, body)
                               : Status::kStorageCorrupt;
    if (checked == Status::kStorageFailure) return checked;
    if (checked != Status::kOk) {
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

bool is_erased(const uint8_t* bytes, size_t length, uint8_t erase_value) {
  for (size_t i = 0; i < length; ++i) {
    if (bytes[i] != erase_value) return false;
  }
  return true;
}

bool BlockLog::consider(uint32_t index, uint32_t newest, uint32_t end) {
  if (has_active && !sequence_newer(newest, sequence)) return false;
  has_active = true;
  active = index;
  sequence = newest;
  offset = end;
  return true;
}

Status BlockLog::move_on(const Port& port) {
  const uint32_t target = next();
  BLUR_TRY(storage_status(port.erase(port.context, block(target))));
  has_active = true;
  active = target;
  offset = 0;
  return Status::kOk;
}

Status BlockLog::append(const Port& port, const uint8_t* head, uint32_t head_size,
                        const uint8_t* tail, uint32_t tail_size) {
  return append_record(port, block(active), &offset, head, head_size, tail, tail_size);
}

}  // namespace blur
