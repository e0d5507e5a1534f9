// ports/posix: Linux/Android-style hosts.
// - Entropy: getrandom(2) (the kernel CSPRNG; blocks until it is seeded).
// - Storage: a file of block_count * block_size bytes, created erased
//   (0xFF) and made durable with its directory entry; sync is fsync(2).
//   The ledger's and queue's own A/B slots (two erase blocks, CRC last,
//   read back) are the power-loss scheme on the file, as on flash.
// - Clock: CLOCK_REALTIME seconds (per-window budgets).
// - No monotonic counter: restoring an old copy of the storage file
//   restores an old budget. An app that needs that defence keeps the file
//   where the user cannot replace it, or supplies counter_read /
//   counter_advance backed by a hardware counter (Android: a KeyMint /
//   StrongBox-bound key version; iOS: the Secure Enclave's counters).
#ifndef BLUR_PORTS_POSIX_PORT_H
#define BLUR_PORTS_POSIX_PORT_H

#include <stdint.h>

#include "blur/port.h"

namespace blur {
namespace posix {

class PosixPort {
 public:
  static constexpr uint32_t kDefaultBlockSize = 4096;
  static constexpr uint32_t kDefaultBlockCount = 4;

  PosixPort() = default;
  ~PosixPort();
  PosixPort(const PosixPort&) = delete;
  PosixPort& operator=(const PosixPort&) = delete;

  // Opens (or creates, erased) the storage file. kStorageFailure on error.
  Status open(const char* path, uint32_t block_size = kDefaultBlockSize,
              uint32_t block_count = kDefaultBlockCount);
  void close();

  Port port();

 private:
  static Status entropy(void* context, uint8_t* out, size_t length);
  static Status read(void* context, uint32_t block, uint32_t offset, uint8_t* out, uint32_t size);
  static Status prog(void* context, uint32_t block, uint32_t offset, const uint8_t* data,
                     uint32_t size);
  static Status erase(void* context, uint32_t block);
  static Status sync(void* context);
  static Status now(void* context, uint64_t* seconds);
  bool in_range(uint32_t block, uint32_t offset, uint32_t size) const;

  int fd_ = -1;
  uint32_t block_size_ = 0;
  uint32_t block_count_ = 0;
};

}  // namespace posix
}  // namespace blur

#endif  // BLUR_PORTS_POSIX_PORT_H
