#include "emulated_flash.h"

#include <string.h>

namespace blur {
namespace flash {

uint64_t splitmix64(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

namespace {

bool power_of_two(uint32_t n) { return n != 0 && (n & (n - 1)) == 0; }

}  // namespace

Status EmulatedFlash::init(const Config& config, uint8_t* bytes, uint32_t* erase_counts) {
  // Unconfigured (every call fails) until every check passes.
  config_ = Config{0, 0, 0, 0x00, false, 0, WearOut::kRefusesPrograms, 0};
  bytes_ = nullptr;
  erase_counts_ = nullptr;
  const bool valid = bytes != nullptr && config.block_count > 0 && power_of_two(config.prog_size) &&
                     config.prog_size <= kMaxProgSize && config.block_size > 0 &&
                     config.block_size % config.prog_size == 0 &&
                     uint64_t{config.block_size} * config.block_count <= UINT32_MAX &&
                     (config.erase_value == 0xFF || config.erase_value == 0x00) &&
                     (config.erase_cycles == 0 || erase_counts != nullptr);
  if (!valid) return Status::kInvalidArgument;
  config_ = config;
  bytes_ = bytes;
  erase_counts_ = erase_counts;
  if (erase_counts_ != nullptr) {
    for (uint32_t b = 0; b < config_.block_count; ++b) erase_counts_[b] = 0;
  }
  power_off_ = false;
  cut_armed_ = false;
  cut_after_ = 0;
  tear_state_ = 0;
  garbage_state_ = config_.garbage_seed;
  flash_operations_ = total_programs_ = total_erases_ = 0;
  misaligned_programs_ = reprogrammed_units_ = 0;
  return Status::kOk;
}

void EmulatedFlash::erase_all() {
  if (configured()) memset(bytes_, config_.erase_value, config_.block_size * config_.block_count);
}

void EmulatedFlash::describe(Port* port) const {
  port->block_size = config_.block_size;
  port->block_count = config_.block_count;
  port->prog_size = config_.prog_size;
  port->erase_value = config_.erase_value;
}

bool EmulatedFlash::in_range(uint32_t block, uint32_t offset, uint32_t size) const {
  return block < config_.block_count && offset <= config_.block_size &&
         size <= config_.block_size - offset;
}

void EmulatedFlash::cut_power_after(uint64_t operations, uint64_t tear_seed) {
  cut_armed_ = operations != kNever;
  cut_after_ = operations;
  tear_state_ = tear_seed;
}

bool EmulatedFlash::take_operation() {
  if (cut_armed_) {
    if (cut_after_ == 0) {
      cut_armed_ = false;
      power_off_ = true;
      return true;
    }
    --cut_after_;
  }
  ++flash_operations_;
  return false;
}

uint32_t EmulatedFlash::erase_count(uint32_t block) const {
  return erase_counts_ != nullptr && block < config_.block_count ? erase_counts_[block] : 0;
}

uint32_t EmulatedFlash::max_erase_count() const {
  uint32_t most = 0;
  for (uint32_t b = 0; b < config_.block_count; ++b) {
    if (erase_count(b) > most) most = erase_count(b);
  }
  return most;
}

bool EmulatedFlash::worn_out(uint32_t block) const {
  return config_.erase_cycles != 0 && erase_count(block) > config_.erase_cycles;
}

bool EmulatedFlash::unit_erased(const uint8_t* target) const {
  for (uint32_t i = 0; i < config_.prog_size; ++i) {
    if (target[i] != config_.erase_value) return false;
  }
  return true;
}

void EmulatedFlash::program_unit(uint8_t* target, const uint8_t* data) const {
  for (uint32_t i = 0; i < config_.prog_size; ++i) {
    target[i] = config_.erase_value == 0xFF ? static_cast<uint8_t>(target[i] & data[i])
                                            : static_cast<uint8_t>(target[i] | data[i]);
  }
}

void EmulatedFlash::half_program_unit(uint8_t* target, const uint8_t* data) {
  for (uint32_t i = 0; i < config_.prog_size; ++i) {
    const uint8_t old = target[i];
    const uint8_t programmed = config_.erase_value == 0xFF ? static_cast<uint8_t>(old & data[i])
                                                           : static_cast<uint8_t>(old | data[i]);
    const uint8_t unchanged =
        static_cast<uint8_t>(splitmix64(&tear_state_));  // bits left as they were
    target[i] = static_cast<uint8_t>((programmed & ~unchanged) | (old & unchanged));
  }
}

void EmulatedFlash::garble_programmed_unit(uint8_t* target) {
  const uint64_t r = splitmix64(&garbage_state_);
  target[r % config_.prog_size] ^= static_cast<uint8_t>(1u << ((r >> 32) % 8));
}

void EmulatedFlash::garble_erased_block(uint32_t block) {
  const uint32_t count = 1 + static_cast<uint32_t>(splitmix64(&garbage_state_) % 4);
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t r = splitmix64(&garbage_state_);
    const uint8_t flip = static_cast<uint8_t>(1 + (r >> 32) % 255);  // nonzero: not erased
    *unit(block, static_cast<uint32_t>(r % config_.block_size)) =
        static_cast<uint8_t>(config_.erase_value ^ flip);
  }
}

Status EmulatedFlash::read(uint32_t block, uint32_t offset, uint8_t* out, uint32_t size) const {
  if (power_off_ || !in_range(block, offset, size)) return Status::kStorageFailure;
  memcpy(out, bytes_ + block * config_.block_size + offset, size);
  return Status::kOk;
}

Status EmulatedFlash::prog(uint32_t block, uint32_t offset, const uint8_t* data, uint32_t size) {
  if (power_off_ || !in_range(block, offset, size)) return Status::kStorageFailure;
  const uint32_t unit_size = config_.prog_size;
  if (offset % unit_size != 0 || size % unit_size != 0) {
    ++misaligned_programs_;
    return Status::kStorageFailure;
  }
  const bool torn = take_operation();
  ++total_programs_;
  const bool worn = worn_out(block);
  if (worn && config_.wear_out == WearOut::kRefusesPrograms) {
    return torn ? Status::kStorageFailure : Status::kStorageWornOut;
  }
  const uint32_t units = size / unit_size;
  if (!worn) {
    uint32_t not_erased = 0;
    for (uint32_t u = 0; u < units; ++u) {
      if (!unit_erased(unit(block, offset + u * unit_size))) ++not_erased;
    }
    reprogrammed_units_ += not_erased;
    if (not_erased > 0 && config_.refuse_second_program) return Status::kStorageFailure;
  }
  const uint32_t complete =
      torn ? static_cast<uint32_t>(splitmix64(&tear_state_) % (units + 1)) : units;
  for (uint32_t u = 0; u < complete; ++u) {
    uint8_t* target = unit(block, offset + u * unit_size);
    program_unit(target, data + u * unit_size);
    if (worn) garble_programmed_unit(target);
  }
  if (torn) {
    if (complete < units) {
      half_program_unit(unit(block, offset + complete * unit_size), data + complete * unit_size);
    }
    return Status::kStorageFailure;
  }
  return Status::kOk;
}

Status EmulatedFlash::erase(uint32_t block) {
  if (power_off_ || block >= config_.block_count) return Status::kStorageFailure;
  const bool torn = take_operation();
  ++total_erases_;
  if (erase_counts_ != nullptr && erase_counts_[block] != UINT32_MAX) ++erase_counts_[block];
  const bool worn = worn_out(block);
  if (worn && config_.wear_out == WearOut::kRefusesPrograms) {
    return torn ? Status::kStorageFailure : Status::kStorageWornOut;
  }
  const uint32_t erased =
      torn ? static_cast<uint32_t>(splitmix64(&tear_state_) % (config_.block_size + 1))
           : config_.block_size;
  memset(unit(block, 0), config_.erase_value, erased);
  if (worn) garble_erased_block(block);
  return torn ? Status::kStorageFailure : Status::kOk;
}

}  // namespace flash
}  // namespace blur
