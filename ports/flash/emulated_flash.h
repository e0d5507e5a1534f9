// ports/flash: flash memory emulated in caller-owned RAM (the idea of
// littlefs's emulated block device, bd/lfs_emubd), shared by the simulator
// port (ports/sim) and the QEMU board port (ports/bare-metal). Device code:
// no heap, no exceptions, no floating point, errors are Status values.
//
// Memory: the caller owns the bytes (block_size * block_count) and,
// optionally, one uint32_t erase counter per block; both must outlive the
// EmulatedFlash. Without counters (nullptr) nothing is counted per block
// and no block wears out.
//
// Behaviour, call by call (every failure is kStorageFailure unless said):
// - init() checks the configuration (see Config) and zeroes the erase
//   counters and statistics; it does not touch the bytes (a port may load
//   a saved image into them). erase_all() makes every byte erase_value
//   (factory-fresh flash; not counted as erases). Until a successful
//   init() every call fails.
// - read: any offset and size inside one block; fails out of range or
//   while the power is cut. Returns the bytes as they are, garbage included.
// - prog: must start on a program unit (prog_size) and cover whole units;
//   otherwise it is refused, changes nothing and is counted in
//   misaligned_programs(). A unit that is not fully erased (some byte
//   differs from erase_value) when programmed is counted in
//   reprogrammed_units(), in both modes below; then
//     refuse_second_program (ECC flash, e.g. STM32L4/H7): the whole call is
//       refused and changes nothing;
//     otherwise (NOR flash): programming only moves bits away from the
//       erased value: new = old & data when erase_value is 0xFF, and
//       new = old | data when it is 0x00.
//   (The check is by content: a unit programmed with erase_value bytes
//   still looks erased and may be programmed again without being counted.)
// - erase: every byte of the block becomes erase_value; counted in
//   erase_count(block).
// - Wear-out (erase_cycles > 0, counters given): erase_count(block) counts
//   every erase call that reached the block (powered and in range), also
//   torn or refused ones; a block whose count exceeds erase_cycles is worn
//   out (the erase that crosses the limit already meets a worn block).
//     kRefusesPrograms: prog and erase of a worn block return
//       kStorageWornOut and change nothing;
//     kReadsGarbage: they return kOk, but every programmed unit lands with
//       one bit flipped (so reading it back never gives the data), and an
//       erase leaves 1 to 4 bytes of the block not erased. Which bits and
//       bytes comes from garbage_seed: the same calls give the same garbage.
//       On a worn block the not-erased check of prog is skipped (and not
//       counted): its contents are garbage anyway.
// - Power cut (cut_power_after): after `operations` more programs and
//   erases have gone through, the next one is torn and the power goes off:
//   that call and every later read, prog and erase fail until
//   restore_power(), the "reboot"; the bytes keep what the torn call left.
//     A torn program writes a prefix of its units (0 to all, drawn from
//       tear_seed) and, if that prefix is not the whole call, leaves the
//       next unit half-programmed: each of its bits that the program would
//       change changes or not at random (an interrupted ECC-word program);
//       the units after it are untouched. With prog_size 1 this is "a prefix
//       of the bytes, then one byte half-programmed".
//     A torn erase sets a prefix of the block (0 to block_size bytes, drawn
//       from tear_seed) to erase_value and leaves the rest as it was.
//     A call the flash would refuse anyway (not erased on ECC flash, worn
//       with kRefusesPrograms) changes nothing when torn.
//   Refusals before the flash is reached (out of range, misaligned, power
//   already off) are no operation: they neither count nor tear.
#ifndef BLUR_PORTS_FLASH_EMULATED_FLASH_H
#define BLUR_PORTS_FLASH_EMULATED_FLASH_H

#include <stdint.h>

#include "blur/port.h"
#include "blur/status.h"

namespace blur {
namespace flash {

// SplitMix64 (Steele et al. 2014): the emulator's tear and garbage patterns,
// and the sim port's deterministic entropy. Not a source of real randomness.
uint64_t splitmix64(uint64_t* state);

// What a worn-out block does (see the behaviour list above).
enum class WearOut : uint8_t {
  kRefusesPrograms,  // prog and erase return kStorageWornOut, nothing changes
  kReadsGarbage,     // prog and erase "succeed"; the contents are corrupted
};

struct Config {
  uint32_t block_size = 0;     // bytes of an erase block, a multiple of prog_size
  uint32_t block_count = 0;    // > 0; block_size * block_count fits in 32 bits
  uint32_t prog_size = 1;      // the program unit: a power of two, 1 to 256
  uint8_t erase_value = 0xFF;  // 0xFF or 0x00
  // true: ECC flash, programming a unit that is not erased is refused;
  // false: NOR flash, it clears (0xFF) or sets (0x00) bits.
  bool refuse_second_program = true;
  // Erases a block survives; 0: unlimited. Needs erase counters.
  uint32_t erase_cycles = 0;
  WearOut wear_out = WearOut::kRefusesPrograms;
  uint64_t garbage_seed = 0;  // the corruption pattern of kReadsGarbage
};

class EmulatedFlash {
 public:
  static constexpr uint64_t kNever = UINT64_MAX;
  static constexpr uint32_t kMaxProgSize = 256;

  constexpr EmulatedFlash() = default;
  EmulatedFlash(const EmulatedFlash&) = delete;
  EmulatedFlash& operator=(const EmulatedFlash&) = delete;

  // kInvalidArgument (and every later call fails) unless: bytes is given,
  // block_count > 0, prog_size is a power of two from 1 to kMaxProgSize,
  // block_size is a nonzero multiple of it, block_size * block_count fits
  // in uint32_t, erase_value is 0xFF or 0x00, and erase_counts is given
  // when erase_cycles > 0. Also powers the flash on, with no cut armed.
  Status init(const Config& config, uint8_t* bytes, uint32_t* erase_counts);
  bool configured() const { return bytes_ != nullptr; }
  const Config& config() const { return config_; }
  // Every byte erase_value (not an erase: no count, no wear, no tear).
  void erase_all();
  // Sets the Port's block_size, block_count, prog_size and erase_value.
  void describe(Port* port) const;

  Status read(uint32_t block, uint32_t offset, uint8_t* out, uint32_t size) const;
  Status prog(uint32_t block, uint32_t offset, const uint8_t* data, uint32_t size);
  Status erase(uint32_t block);
  // Whether [offset, offset + size) lies in block `block`.
  bool in_range(uint32_t block, uint32_t offset, uint32_t size) const;

  // Power cut: see the behaviour list. tear_seed draws the torn pattern;
  // operations == kNever disarms. restore_power() powers on and disarms.
  void cut_power_after(uint64_t operations, uint64_t tear_seed);
  void restore_power() { cut_armed_ = false, power_off_ = false; }
  bool powered() const { return !power_off_; }

  // Statistics since init().
  // Programs and erases that went through untorn (what cut_power_after counts).
  uint64_t flash_operations() const { return flash_operations_; }
  // Program and erase calls that reached the flash: torn and refused
  // (not erased, worn) ones included; misaligned and out-of-range ones not.
  uint64_t total_programs() const { return total_programs_; }
  uint64_t total_erases() const { return total_erases_; }
  // Refused program calls that did not cover whole aligned units.
  uint64_t misaligned_programs() const { return misaligned_programs_; }
  // Units found not erased when programmed (refused or merged).
  uint64_t reprogrammed_units() const { return reprogrammed_units_; }
  // Erase calls that reached `block` (0 without counters or out of range).
  uint32_t erase_count(uint32_t block) const;
  uint32_t max_erase_count() const;
  bool worn_out(uint32_t block) const;

  // The bytes (block-major), for tests that corrupt or inspect them.
  uint8_t* bytes() { return bytes_; }
  const uint8_t* bytes() const { return bytes_; }

 private:
  // Counts a program or erase that reaches the flash; true if it is torn
  // (the power is now off).
  bool take_operation();
  uint8_t* unit(uint32_t block, uint32_t offset) {
    return bytes_ + block * config_.block_size + offset;
  }
  bool unit_erased(const uint8_t* unit) const;
  // Programs one unit (NOR merge; equals a copy on an erased unit).
  void program_unit(uint8_t* target, const uint8_t* data) const;
  void half_program_unit(uint8_t* target, const uint8_t* data);
  void garble_programmed_unit(uint8_t* target);
  void garble_erased_block(uint32_t block);

  // Every member starts at zero (a global EmulatedFlash costs no .data).
  Config config_{0, 0, 0, 0x00, false, 0, WearOut::kRefusesPrograms, 0};
  uint8_t* bytes_ = nullptr;
  uint32_t* erase_counts_ = nullptr;
  bool power_off_ = false;
  bool cut_armed_ = false;
  uint64_t cut_after_ = 0;  // operations before the torn one, when armed
  uint64_t tear_state_ = 0;
  uint64_t garbage_state_ = 0;
  uint64_t flash_operations_ = 0;
  uint64_t total_programs_ = 0;
  uint64_t total_erases_ = 0;
  uint64_t misaligned_programs_ = 0;
  uint64_t reprogrammed_units_ = 0;
};

}  // namespace flash
}  // namespace blur

#endif  // BLUR_PORTS_FLASH_EMULATED_FLASH_H
