#include "sim_port.h"

namespace blur {
namespace sim {

flash::Config SimPort::default_flash_config(uint32_t block_count) {
  flash::Config config;
  config.block_size = kBlockSize;
  config.block_count = block_count;
  config.prog_size = 1;
  config.erase_value = 0xFF;
  config.refuse_second_program = true;
  return config;
}

SimPort::SimPort(uint64_t seed) : state_(seed) {
  init_flash(default_flash_config(), own_flash_, own_erase_counts_);
}

SimPort::SimPort(uint64_t seed, uint8_t* flash, uint32_t block_count) : state_(seed) {
  init_flash(default_flash_config(block_count), flash, nullptr);
}

SimPort::SimPort(uint64_t seed, const flash::Config& config, uint8_t* flash, uint32_t* erase_counts)
    : state_(seed) {
  init_flash(config, flash, erase_counts);
}

void SimPort::init_flash(const flash::Config& config, uint8_t* flash, uint32_t* erase_counts) {
  if (erase_counts == nullptr && config.block_count <= kOwnEraseCounters) {
    erase_counts = own_erase_counts_;
  }
  if (flash_.init(config, flash, erase_counts) == Status::kOk) flash_.erase_all();
}

Port SimPort::port() {
  Port port = member_port(this);
  flash_.describe(&port);
  if (counter_enabled_) {
    port.counter_read = &SimPort::counter_read;
    port.counter_advance = &SimPort::counter_advance;
  }
  return port;
}

Status SimPort::now(uint64_t* seconds) {
  if (clock_fails_) return Status::kClockFailure;
  *seconds = time_;
  return Status::kOk;
}

Status SimPort::counter_read(void* context, uint64_t* value) {
  *value = static_cast<SimPort*>(context)->counter_;
  return Status::kOk;
}

Status SimPort::counter_advance(void* context, uint64_t value) {
  SimPort* self = static_cast<SimPort*>(context);
  if (!self->powered()) return Status::kStorageFailure;
  if (value > self->counter_) self->counter_ = value;
  return Status::kOk;
}

Status SimPort::entropy(uint8_t* out, size_t length) {
  if (entropy_budget_ != kNever) {
    if (length > entropy_budget_) return Status::kEntropyFailure;
    entropy_budget_ -= length;
  }
  for (size_t i = 0; i < length; i += 8) {
    const uint64_t word = flash::splitmix64(&state_);
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

Status SimPort::read(uint32_t block, uint32_t offset, uint8_t* out, uint32_t size) {
  return flash_.read(block, offset, out, size);
}

Status SimPort::prog(uint32_t block, uint32_t offset, const uint8_t* data, uint32_t size) {
  if (!flash_.in_range(block, offset, size) || !take_storage_operation()) {
    return Status::kStorageFailure;
  }
  return flash_.prog(block, offset, data, size);
}

Status SimPort::erase(uint32_t block) {
  if (!flash_.in_range(block, 0, 0) || !take_storage_operation()) return Status::kStorageFailure;
  return flash_.erase(block);
}

Status SimPort::sync() {
  return powered() && take_storage_operation() ? Status::kOk : Status::kStorageFailure;
}

}  // namespace sim
}  // namespace blur
