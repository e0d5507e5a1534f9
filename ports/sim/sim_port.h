// ports/sim: a simulated device for tests and the fleet simulator.
//
// - Entropy: a deterministic byte stream from a 64-bit seed (SplitMix64,
//   Steele et al. 2014). NOT random: it makes tests and simulated fleets
//   reproducible. Real devices use ports/posix or their TRNG.
// - Storage: NOR flash emulated in RAM (erase to 0xFF; programming a byte
//   that is not erased is an error, as on real flash).
// - Fault injection for tests: entropy or storage can be made to fail after
//   a given number of bytes or operations.
#ifndef BLUR_PORTS_SIM_PORT_H
#define BLUR_PORTS_SIM_PORT_H

#include <stdint.h>

#include "blur/port.h"

namespace blur {
namespace sim {

class SimPort {
 public:
  static constexpr uint32_t kBlockSize = 256;
  static constexpr uint32_t kBlockCount = 4;
  static constexpr uint64_t kNever = UINT64_MAX;

  explicit SimPort(uint64_t seed);
  SimPort(const SimPort&) = delete;
  SimPort& operator=(const SimPort&) = delete;

  // The callbacks, bound to this object (which must outlive their use).
  Port port();

  // Entropy calls fail once `bytes` more bytes have been delivered.
  void fail_entropy_after(uint64_t bytes) { entropy_budget_ = bytes; }
  // Program/erase/sync calls fail once `operations` more have succeeded.
  void fail_storage_after(uint64_t operations) { storage_budget_ = operations; }
  uint64_t storage_operations() const { return storage_operations_; }
  // Raw flash, for corruption tests.
  uint8_t* flash() { return flash_; }

 private:
  static Status entropy(void* context, uint8_t* out, size_t length);
  static Status read(void* context, uint32_t block, uint32_t offset, uint8_t* out, uint32_t size);
  static Status prog(void* context, uint32_t block, uint32_t offset, const uint8_t* data,
                     uint32_t size);
  static Status erase(void* context, uint32_t block);
  static Status sync(void* context);
  bool take_storage_operation();

  uint64_t state_;
  uint64_t entropy_budget_ = kNever;
  uint64_t storage_budget_ = kNever;
  uint64_t storage_operations_ = 0;
  uint8_t flash_[kBlockSize * kBlockCount];
};

}  // namespace sim
}  // namespace blur

#endif  // BLUR_PORTS_SIM_PORT_H
