// The platform port: a struct of callbacks plus a context pointer (the
// littlefs lfs_config pattern). The SDK calls only these; it has no global
// state and no OS dependency. ports/ has implementations for POSIX hosts,
// the test simulator, and the QEMU Cortex-M board.
#ifndef BLUR_PORT_H
#define BLUR_PORT_H

#include <stddef.h>
#include <stdint.h>

#include "blur/config.h"
#include "blur/status.h"

namespace blur {

struct Port {
  // Passed back to every callback.
  void* context;

  // Fills out[0..length) with full-entropy random bytes (a TRNG, getrandom).
  // Returns kOk, or kEntropyFailure: the SDK then produces nothing.
  Status (*entropy)(void* context, uint8_t* out, size_t length);

  // Persistent storage of `block_count` erase blocks of `block_size` bytes
  // with flash semantics: erase sets every byte of a block to erase_value;
  // prog writes whole program units into an erased region (the SDK never
  // programs a unit twice between erases, so ECC flash that refuses a second
  // program works); sync makes programmed data durable. A block that has
  // worn out (refuses an erase or a program, or reads back other bytes) is
  // reported by the SDK as kStorageWornOut. Any port failure is reported as
  // kStorageFailure. docs/storage.md has the on-flash formats.
  Status (*read)(void* context, uint32_t block, uint32_t offset, uint8_t* out, uint32_t size);
  Status (*prog)(void* context, uint32_t block, uint32_t offset, const uint8_t* data,
                 uint32_t size);
  Status (*erase)(void* context, uint32_t block);
  Status (*sync)(void* context);
  uint32_t block_size;  // a multiple of prog_size
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

  // The program unit in bytes, a power of two from 1 to BLUR_MAX_PROG_SIZE
  // (config.h, default 256). Default 1: byte-programmable NOR flash. Flash
  // with ECC programs 8 (STM32L4/G4), 16 (STM32H7 some banks), 32 (STM32H7)
  // bytes at a time: set it to that word. Every prog call starts on a unit
  // boundary and covers whole units.
  uint32_t prog_size = 1;
  // The value of an erased byte: 0xFF (default: NOR flash) or 0x00.
  uint8_t erase_value = 0xFF;
};

// A range of the port's erase blocks handed to one user (the ledger or the
// report queue): blocks [first_block, first_block + block_count). Users'
// partitions must not overlap; Client::open refuses overlapping ones.
struct Partition {
  uint32_t first_block;
  uint32_t block_count;
};

// Whether two partitions share a block.
constexpr bool partitions_overlap(Partition a, Partition b) {
  return a.first_block < b.first_block + b.block_count &&
         b.first_block < a.first_block + a.block_count;
}

// The Port of an object whose member functions are the callbacks:
//   Status entropy(uint8_t* out, size_t length);
//   Status read(uint32_t block, uint32_t offset, uint8_t* out, uint32_t size);
//   Status prog(uint32_t block, uint32_t offset, const uint8_t* data, uint32_t size);
//   Status erase(uint32_t block);
//   Status sync();
//   Status now(uint64_t* seconds);
// with `self` as the context: the one set of trampolines for C++ ports
// (ports/posix, ports/sim). The storage geometry and the optional counter
// are the caller's to fill.
template <typename T>
Port member_port(T* self) {
  Port port{};
  port.context = self;
  port.entropy = [](void* context, uint8_t* out, size_t length) {
    return static_cast<T*>(context)->entropy(out, length);
  };
  port.read = [](void* context, uint32_t block, uint32_t offset, uint8_t* out, uint32_t size) {
    return static_cast<T*>(context)->read(block, offset, out, size);
  };
  port.prog = [](void* context, uint32_t block, uint32_t offset, const uint8_t* data,
                 uint32_t size) { return static_cast<T*>(context)->prog(block, offset, data, size); };
  port.erase = [](void* context, uint32_t block) { return static_cast<T*>(context)->erase(block); };
  port.sync = [](void* context) { return static_cast<T*>(context)->sync(); };
  port.now = [](void* context, uint64_t* seconds) { return static_cast<T*>(context)->now(seconds); };
  return port;
}

}  // namespace blur

#endif  // BLUR_PORT_H
