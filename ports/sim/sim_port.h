// ports/sim: a simulated device for tests and the fleet simulator.
//
// - Entropy: a deterministic byte stream from a 64-bit seed (SplitMix64,
//   Steele et al. 2014). NOT random: it makes tests and simulated fleets
//   reproducible. Real devices use ports/posix or their TRNG.
// - Storage: flash emulated in RAM by ports/flash (flash::EmulatedFlash,
//   whose header documents every behaviour). By default 6 blocks of 512
//   bytes, byte-programmable, erased to 0xFF, programming a byte that is not
//   erased refused (kStorageFailure), no wear-out. The configuration
//   constructor gives any geometry (program unit, erased value), NOR or ECC
//   programming and wear-out after a number of erases.
// - Clock: simulated seconds, set by the test (for per-window budgets).
// - Monotonic counter (optional): survives "reflashing" the RAM flash.
// - Fault injection for tests: entropy or storage can be made to fail after
//   a given number of bytes or operations, and power can be cut at the k-th
//   program or erase (the littlefs emubd idea): that operation is torn (a
//   program writes a prefix of its units and leaves the next unit
//   half-programmed; an erase resets only a prefix of the block) and every
//   later storage call fails until restore_power(), the "reboot". The flash
//   keeps its contents across the reboot.
// - Erase counters: SimPort holds kOwnEraseCounters of them, used whenever
//   the flash has at most that many blocks and the caller gives no array
//   of its own; a larger flash without the caller's array counts no erases
//   and cannot wear out. No heap: SimPort also runs in Cortex-M tests.
#ifndef BLUR_PORTS_SIM_PORT_H
#define BLUR_PORTS_SIM_PORT_H

#include <stdint.h>

#include "blur/port.h"
#include "emulated_flash.h"

namespace blur {
namespace sim {

class SimPort {
 public:
  static constexpr uint32_t kBlockSize = 512;
  static constexpr uint32_t kBlockCount = 6;  // ledger: 0-1, report queue: 2-5
  static constexpr uint64_t kNever = UINT64_MAX;
  static constexpr uint32_t kOwnEraseCounters = 64;
  // The default partitions of the default storage (as Client::open(port)).
  static constexpr Partition kLedgerPartition{0, 2};
  static constexpr Partition kQueuePartition{2, kBlockCount - 2};

  explicit SimPort(uint64_t seed);
  // Storage on the caller's buffer of block_count * kBlockSize bytes
  // (block_count >= kBlockCount), which must outlive this object: a longer
  // report queue than the default (64-report batches need about 15 blocks).
  SimPort(uint64_t seed, uint8_t* flash, uint32_t block_count);
  // Storage of any configuration (default_flash_config() tweaked) on the
  // caller's buffer of config.block_size * config.block_count bytes and,
  // if given, its config.block_count erase counters; both must outlive this
  // object. The flash starts erased (erase_value) with zero counts. An
  // invalid configuration (see flash::EmulatedFlash::init) leaves
  // emulated_flash().configured() false and every storage call failing.
  SimPort(uint64_t seed, const flash::Config& config, uint8_t* flash,
          uint32_t* erase_counts = nullptr);
  // The default storage's configuration, with `block_count` blocks.
  static flash::Config default_flash_config(uint32_t block_count = kBlockCount);
  SimPort(const SimPort&) = delete;
  SimPort& operator=(const SimPort&) = delete;

  // The callbacks, bound to this object (which must outlive their use),
  // with the flash's geometry (block size and count, prog_size, erase_value).
  Port port();

  // Entropy calls fail once `bytes` more bytes have been delivered.
  void fail_entropy_after(uint64_t bytes) { entropy_budget_ = bytes; }
  // Program/erase/sync calls fail once `operations` more have succeeded.
  void fail_storage_after(uint64_t operations) { storage_budget_ = operations; }
  uint64_t storage_operations() const { return storage_operations_; }

  // Power cut: the program or erase after `operations` more of them is torn
  // (pattern drawn from `tear_seed`), and storage is dead until restore_power().
  void cut_power_after(uint64_t operations, uint64_t tear_seed) {
    flash_.cut_power_after(operations, tear_seed);
  }
  void restore_power() { flash_.restore_power(); }
  bool powered() const { return flash_.powered(); }
  // Programs and erases so far (the operations cut_power_after counts).
  uint64_t flash_operations() const { return flash_.flash_operations(); }

  void set_time(uint64_t seconds) { time_ = seconds; }
  void advance_time(uint64_t seconds) { time_ += seconds; }
  void fail_clock(bool fail) { clock_fails_ = fail; }
  // Adds the monotonic-counter callbacks to port().
  void enable_counter() { counter_enabled_ = true; }
  uint64_t counter() const { return counter_; }
  // Raw flash, for corruption tests.
  uint8_t* flash() { return flash_.bytes(); }
  uint32_t block_count() const { return flash_.config().block_count; }

  // The emulated flash: its configuration and statistics.
  flash::EmulatedFlash& emulated_flash() { return flash_; }
  const flash::EmulatedFlash& emulated_flash() const { return flash_; }
  // Erase calls that reached `block` (0 when erases are not counted).
  uint32_t erase_count(uint32_t block) const { return flash_.erase_count(block); }
  uint32_t max_erase_count() const { return flash_.max_erase_count(); }
  // Program calls refused for not covering whole aligned units, and units
  // programmed while not erased: what the SDK must never do.
  uint64_t misaligned_programs() const { return flash_.misaligned_programs(); }
  uint64_t reprogrammed_units() const { return flash_.reprogrammed_units(); }

 private:
  template <typename T>
  friend Port blur::member_port(T* self);
  // The callbacks (member_port, blur/port.h).
  Status entropy(uint8_t* out, size_t length);
  Status read(uint32_t block, uint32_t offset, uint8_t* out, uint32_t size);
  Status prog(uint32_t block, uint32_t offset, const uint8_t* data, uint32_t size);
  Status erase(uint32_t block);
  Status sync();
  Status now(uint64_t* seconds);
  static Status counter_read(void* context, uint64_t* value);
  static Status counter_advance(void* context, uint64_t value);
  bool take_storage_operation();
  void init_flash(const flash::Config& config, uint8_t* flash, uint32_t* erase_counts);

  uint64_t state_;
  uint64_t entropy_budget_ = kNever;
  uint64_t storage_budget_ = kNever;
  uint64_t storage_operations_ = 0;
  uint64_t time_ = 1700000000;  // an arbitrary start, far from 0
  bool clock_fails_ = false;
  bool counter_enabled_ = false;
  uint64_t counter_ = 0;
  flash::EmulatedFlash flash_;  // over own_flash_ or the caller's bytes
  uint32_t own_erase_counts_[kOwnEraseCounters];
  uint8_t own_flash_[kBlockSize * kBlockCount];
};

}  // namespace sim
}  // namespace blur

#endif  // BLUR_PORTS_SIM_PORT_H
