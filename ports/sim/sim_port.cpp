#include "sim_port.h"

#include <string.h>

namespace blur {
namespace sim {

namespace {

uint64_t splitmix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

bool in_range(uint32_t block, uint32_t offset, uint32_t size) {
  return block < SimPort::kBlockCount && offset <= SimPort::kBlockSize &&
         size <= SimPort::kBlockSize - offset;
}

}  // namespace

SimPort::SimPort(uint64_t seed) : state_(seed) { memset(flash_, 0xFF, sizeof flash_); }

Port SimPort::port() {
  return Port{this,           &SimPort::entropy, &SimPort::read, &SimPort::prog, &SimPort::erase,
              &SimPort::sync, kBlockSize,        kBlockCount};
}

Status SimPort::entropy(void* context, uint8_t* out, size_t length) {
  SimPort* self = static_cast<SimPort*>(context);
  if (self->entropy_budget_ != kNever) {
    if (length > self->entropy_budget_) return Status::kEntropyFailure;
    self->entropy_budget_ -= length;
  }
  for (size_t i = 0; i < length; i += 8) {
    const uint64_t word = splitmix64(&self->state_);
    for (size_t j = 0; j < 8 && i + j < length; ++j)
      out[i + j] = static_cast<uint8_t>(word >> (8 * j));
  }
  return Status::kOk;
}

bool SimPort::take_storage_operation() {
  if (storage_budget_ != kNever) {
    if (storage_budget_ == 0) return false;
    --storage_budget_;
  }
  ++storage_operations_;
  return true;
}

Status SimPort::read(void* context, uint32_t block, uint32_t offset, uint8_t* out, uint32_t size) {
  SimPort* self = static_cast<SimPort*>(context);
  if (!in_range(block, offset, size)) return Status::kStorageFailure;
  memcpy(out, self->flash_ + block * kBlockSize + offset, size);
  return Status::kOk;
}

Status SimPort::prog(void* context, uint32_t block, uint32_t offset, const uint8_t* data,
                     uint32_t size) {
  SimPort* self = static_cast<SimPort*>(context);
  if (!in_range(block, offset, size) || !self->take_storage_operation()) {
    return Status::kStorageFailure;
  }
  uint8_t* target = self->flash_ + block * kBlockSize + offset;
  for (uint32_t i = 0; i < size; ++i) {
    if (target[i] != 0xFF) return Status::kStorageFailure;  // not erased
    target[i] = data[i];
  }
  return Status::kOk;
}

Status SimPort::erase(void* context, uint32_t block) {
  SimPort* self = static_cast<SimPort*>(context);
  if (block >= kBlockCount || !self->take_storage_operation()) return Status::kStorageFailure;
  memset(self->flash_ + block * kBlockSize, 0xFF, kBlockSize);
  return Status::kOk;
}

Status SimPort::sync(void* context) {
  SimPort* self = static_cast<SimPort*>(context);
  return self->take_storage_operation() ? Status::kOk : Status::kStorageFailure;
}

}  // namespace sim
}  // namespace blur
