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

}  // namespace

SimPort::SimPort(uint64_t seed) : state_(seed), flash_(own_flash_) {
  memset(own_flash_, 0xFF, sizeof own_flash_);
}

SimPort::SimPort(uint64_t seed, uint8_t* flash, uint32_t block_count)
    : state_(seed), flash_(flash), block_count_(block_count) {
  memset(flash_, 0xFF, static_cast<size_t>(block_count) * kBlockSize);
}

bool SimPort::in_range(uint32_t block, uint32_t offset, uint32_t size) const {
  return block < block_count_ && offset <= kBlockSize && size <= kBlockSize - offset;
}

Port SimPort::port() {
  Port port{this,           &SimPort::entropy, &SimPort::read, &SimPort::prog, &SimPort::erase,
            &SimPort::sync, kBlockSize,        block_count_,   &SimPort::now,  nullptr,
            nullptr};
  if (counter_enabled_) {
    port.counter_read = &SimPort::counter_read;
    port.counter_advance = &SimPort::counter_advance;
  }
  return port;
}

void SimPort::cut_power_after(uint64_t operations, uint64_t tear_seed) {
  power_cut_after_ = operations;
  tear_state_ = tear_seed;
}

uint64_t SimPort::next_tear_random() { return splitmix64(&tear_state_); }

bool SimPort::take_flash_operation(bool* tear) {
  *tear = false;
  if (!powered_) return false;
  if (power_cut_after_ != kNever) {
    if (power_cut_after_ == 0) {
      *tear = true;
      powered_ = false;
      return true;  // the caller applies part of the operation
    }
    --power_cut_after_;
  }
  ++flash_operations_;
  return true;
}

Status SimPort::now(void* context, uint64_t* seconds) {
  SimPort* self = static_cast<SimPort*>(context);
  if (self->clock_fails_) return Status::kClockFailure;
  *seconds = self->time_;
  return Status::kOk;
}

Status SimPort::counter_read(void* context, uint64_t* value) {
  *value = static_cast<SimPort*>(context)->counter_;
  return Status::kOk;
}

Status SimPort::counter_advance(void* context, uint64_t value) {
  SimPort* self = static_cast<SimPort*>(context);
  if (!self->powered_) return Status::kStorageFailure;
  if (value > self->counter_) self->counter_ = value;
  return Status::kOk;
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
  if (!self->in_range(block, offset, size) || !self->powered_) return Status::kStorageFailure;
  memcpy(out, self->flash_ + block * kBlockSize + offset, size);
  return Status::kOk;
}

Status SimPort::prog(void* context, uint32_t block, uint32_t offset, const uint8_t* data,
                     uint32_t size) {
  SimPort* self = static_cast<SimPort*>(context);
  bool tear = false;
  if (!self->in_range(block, offset, size) || !self->take_storage_operation() ||
      !self->take_flash_operation(&tear)) {
    return Status::kStorageFailure;
  }
  uint8_t* target = self->flash_ + block * kBlockSize + offset;
  for (uint32_t i = 0; i < size; ++i) {
    if (target[i] != 0xFF) return Status::kStorageFailure;  // not erased
  }
  // Torn: a prefix is programmed, the next byte only partly (programming
  // clears bits: some of the bits that should become 0 do).
  const uint32_t complete =
      tear ? static_cast<uint32_t>(self->next_tear_random() % (size + 1)) : size;
  for (uint32_t i = 0; i < complete; ++i) target[i] = data[i];
  if (tear) {
    if (complete < size) {
      target[complete] = static_cast<uint8_t>(data[complete] | self->next_tear_random());
    }
    return Status::kStorageFailure;
  }
  return Status::kOk;
}

Status SimPort::erase(void* context, uint32_t block) {
  SimPort* self = static_cast<SimPort*>(context);
  bool tear = false;
  if (block >= self->block_count_ || !self->take_storage_operation() ||
      !self->take_flash_operation(&tear)) {
    return Status::kStorageFailure;
  }
  // Torn: only a prefix of the block is erased.
  const uint32_t erased =
      tear ? static_cast<uint32_t>(self->next_tear_random() % (kBlockSize + 1)) : kBlockSize;
  memset(self->flash_ + block * kBlockSize, 0xFF, erased);
  return tear ? Status::kStorageFailure : Status::kOk;
}

Status SimPort::sync(void* context) {
  SimPort* self = static_cast<SimPort*>(context);
  return self->powered_ && self->take_storage_operation() ? Status::kOk : Status::kStorageFailure;
}

}  // namespace sim
}  // namespace blur
