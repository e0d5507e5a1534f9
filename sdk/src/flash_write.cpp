#include "flash_write.h"

#include <string.h>

#include "crc32.h"

namespace blur {

namespace {
constexpr uint32_t kChunk = 32;  // bytes per read-back: stack, not RAM buffers
}  // namespace

Status program_verified(const Port& port, uint32_t block, uint32_t offset, const uint8_t* body,
                        uint32_t body_size, const uint8_t* mark, uint32_t mark_size) {
  if (port.prog(port.context, block, offset, body, body_size) != Status::kOk ||
      port.prog(port.context, block, offset + body_size, mark, mark_size) != Status::kOk ||
      port.sync(port.context) != Status::kOk) {
    return Status::kStorageFailure;
  }
  BLUR_TRY(read_back(port, block, offset, body, body_size));
  return read_back(port, block, offset + body_size, mark, mark_size);
}

Status read_back(const Port& port, uint32_t block, uint32_t offset, const uint8_t* expected,
                 uint32_t size) {
  uint8_t chunk[kChunk];
  for (uint32_t done = 0; done < size;) {
    const uint32_t n = size - done < kChunk ? size - done : kChunk;
    if (port.read(port.context, block, offset + done, chunk, n) != Status::kOk ||
        memcmp(chunk, expected + done, n) != 0) {
      return Status::kStorageFailure;
    }
    done += n;
  }
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

bool is_erased(const uint8_t* bytes, size_t length) {
  for (size_t i = 0; i < length; ++i) {
    if (bytes[i] != 0xFF) return false;
  }
  return true;
}

}  // namespace blur
