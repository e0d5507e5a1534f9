// The platform port: a struct of callbacks plus a context pointer (the
// littlefs lfs_config pattern). The SDK calls only these; it has no global
// state and no OS dependency. ports/ has implementations for POSIX hosts,
// the test simulator, and the QEMU Cortex-M board.
#ifndef BLUR_PORT_H
#define BLUR_PORT_H

#include <stddef.h>
#include <stdint.h>

#include "blur/status.h"

namespace blur {

struct Port {
  // Passed back to every callback.
  void* context;

  // Fills out[0..length) with full-entropy random bytes (a TRNG, getrandom).
  // Returns kOk, or kEntropyFailure: the SDK then produces nothing.
  Status (*entropy)(void* context, uint8_t* out, size_t length);

  // Persistent storage of `block_count` erase blocks of `block_size` bytes,
  // NOR-flash semantics: erase sets a block to 0xFF; program writes bytes of
  // an erased region; sync makes programmed data durable. Any failure is
  // reported as kStorageFailure.
  Status (*read)(void* context, uint32_t block, uint32_t offset, uint8_t* out, uint32_t size);
  Status (*prog)(void* context, uint32_t block, uint32_t offset, const uint8_t* data,
                 uint32_t size);
  Status (*erase)(void* context, uint32_t block);
  Status (*sync)(void* context);
  uint32_t block_size;
  uint32_t block_count;

  // Optional (nullptr when absent). Seconds on a clock that keeps counting
  // across reboots (an RTC, time(2)); only per-window budgets need it. The
  // ledger never refills a window when the clock goes backwards.
  Status (*now)(void* context, uint64_t* seconds);

  // Optional monotonic counter that survives reflashing the storage (eMMC
  // RPMB, a TPM NV counter, OTP fuses), both callbacks or neither. With it,
  // the ledger refuses a storage image older than its last write
  // (kStorageRollback); without it, restoring an old flash image restores
  // the old budget, a risk the integrator must accept or prevent.
  Status (*counter_read)(void* context, uint64_t* value);
  Status (*counter_advance)(void* context, uint64_t value);  // to at least `value`
};

}  // namespace blur

#endif  // BLUR_PORT_H
