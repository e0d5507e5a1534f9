// One status enum for the whole SDK. Every fallible call returns it (or a
// Result<T> carrying it); the type is [[nodiscard]], so ignoring one is a
// compile error under -Werror.
#ifndef BLUR_STATUS_H
#define BLUR_STATUS_H

#include <stdint.h>

namespace blur {

enum class [[nodiscard]] Status : uint8_t{
    kOk = 0,
    kInvalidArgument,        // a parameter is out of range; nothing changed
    kBufferTooSmall,         // the caller's buffer cannot hold the output
    kEntropyFailure,         // the entropy port or the DRBG failed: no randomness, no report
    kStorageFailure,         // the storage port failed (read, program, erase, sync or read-back)
    kStorageCorrupt,         // storage holds data but no valid record: the ledger stays closed
    kNotProvisioned,         // storage is blank: provision the ledger explicitly
    kAlreadyProvisioned,     // a valid ledger exists; provisioning would reset it
    kBudgetExhausted,        // the charge would exceed the lifetime privacy budget
    kLedgerClosed,           // the ledger is not open (never opened, or a write failed)
    kIterationCap,           // a sampler ran past its iteration cap: no output
    kEncodingFailure,        // the wire encoder failed
    kCryptoFailure,          // a cryptographic primitive (SHA-256) failed
    kWindowBudgetExhausted,  // the charge would exceed the current time window's allowance
    kMetricBudgetExhausted,  // the charge would exceed the metric's own cap
    kClockFailure,           // the clock port failed or is missing: no window accounting
    kStorageRollback,        // storage is older than the monotonic counter: the ledger stays closed
    kQueueFull,              // the report queue has no room: refused before any charge
    kMemoTableFull,          // no room to record another memoized metric: refused
    kTransportFailure,       // the collector could not be reached, or refused the batch
    kNotBuilt,               // the mechanism (or memoization) was left out of this build
    kStorageWornOut,         // a flash block failed to erase or program as it should: worn out
    kStorageIncompatible,    // stored data this build cannot hold (larger capacities, newer format)
    kPartitionsOverlap,      // the ledger's and the queue's partitions share a block
    kConfigurationChanged,   // a memoized metric id was recorded with another configuration
};
inline constexpr Status kLastStatus = Status::kConfigurationChanged;

// A stable, human-readable name ("ok", "budget exhausted", ...).
const char* status_name(Status status);

inline constexpr bool ok(Status status) { return status == Status::kOk; }

}  // namespace blur

// Propagates a non-ok status to the caller.
#define BLUR_TRY(expr)                              \
  do {                                              \
    const ::blur::Status blur_try_status_ = (expr); \
    if (blur_try_status_ != ::blur::Status::kOk) {  \
      return blur_try_status_;                      \
    }                                               \
  } while (0)

#endif  // BLUR_STATUS_H
