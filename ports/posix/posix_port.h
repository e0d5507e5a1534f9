// ports/posix: Linux/Android-style hosts.
// - Entropy: getrandom(2) (the kernel CSPRNG; blocks until it is seeded).
// - Storage: a file of block_count * block_size bytes, created erased
//   (0xFF) and made durable with its directory entry; sync is fsync(2).
//   The ledger's and queue's own A/B slots (two erase blocks, CRC last,
//   read back) are the power-loss scheme on the file, as on flash.
// - Clock: CLOCK_REALTIME seconds (per-window budgets).
// - No monotonic counter (port().counter_read/_advance are null): an old
//   copy of the storage file put back (a backup, a copied or reflashed
//   image) brings back its larger remaining budget, unnoticed. Where the OS
//   has a counter that survives that, set the two callbacks on port():
//   * Linux, TPM 2.0 (tpm2-tss ESAPI): an NV index of type counter
//     (TPMA_NV_COUNTER, incremented once after definition: an unwritten
//     index cannot be read). counter_read: Esys_NV_Read of its 8 bytes
//     (big-endian); counter_advance: Esys_NV_Increment (+1 per call) until
//     it reaches the value. Each ledger write advances it once: mind the
//     TPM's NV endurance (TPMA_NV_ORDERLY counters spare it).
//   * Linux, eMMC: keep the value in an RPMB block (/dev/mmcblkNrpmb, the
//     MMC_IOC_MULTI_CMD ioctl that mmc-utils' `mmc rpmb` uses); the card's
//     authenticated writes and write counter refuse a replayed older block.
//     It needs the RPMB key, which belongs in a TEE (OP-TEE), not the app.
//   * Android: none an app can reach. Rollback-resistant keys (KeyMint's
//     ROLLBACK_RESISTANCE, on RPMB or a StrongBox secure element) and
//     Weaver serve the system; only a platform component can build a
//     counter on them. Apps should exclude the file from Auto Backup
//     (dataExtractionRules / fullBackupContent) so a restore cannot roll it back.
//   * iOS: none an app can use (the Secure Enclave's counters are not
//     exposed). Exclude the file from backups (NSURLIsExcludedFromBackupKey)
//     and accept the rest of the risk.
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
  template <typename T>
  friend Port blur::member_port(T* self);
  // The callbacks (member_port, blur/port.h); entropy (getrandom) and the
  // clock (CLOCK_REALTIME) need no state of the port.
  static Status entropy(uint8_t* out, size_t length);
  static Status now(uint64_t* seconds);
  Status read(uint32_t block, uint32_t offset, uint8_t* out, uint32_t size);
  Status prog(uint32_t block, uint32_t offset, const uint8_t* data, uint32_t size);
  Status erase(uint32_t block);
  Status sync();
  bool in_range(uint32_t block, uint32_t offset, uint32_t size) const;

  int fd_ = -1;
  uint32_t block_size_ = 0;
  uint32_t block_count_ = 0;
};

}  // namespace posix
}  // namespace blur

#endif  // BLUR_PORTS_POSIX_PORT_H
