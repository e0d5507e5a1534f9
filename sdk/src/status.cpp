#include "blur/status.h"

namespace blur {

const char* status_name(Status status) {
  switch (status) {
    case Status::kOk:
      return "ok";
    case Status::kInvalidArgument:
      return "invalid argument";
    case Status::kBufferTooSmall:
      return "buffer too small";
    case Status::kEntropyFailure:
      return "entropy failure";
    case Status::kStorageFailure:
      return "storage failure";
    case Status::kStorageCorrupt:
      return "storage corrupt";
    case Status::kNotProvisioned:
      return "not provisioned";
    case Status::kAlreadyProvisioned:
      return "already provisioned";
    case Status::kBudgetExhausted:
      return "lifetime budget exhausted";
    case Status::kLedgerClosed:
      return "ledger closed";
    case Status::kIterationCap:
      return "sampler iteration cap";
    case Status::kEncodingFailure:
      return "encoding failure";
    case Status::kCryptoFailure:
      return "crypto failure";
    case Status::kWindowBudgetExhausted:
      return "window budget exhausted";
    case Status::kMetricBudgetExhausted:
      return "metric budget exhausted";
    case Status::kClockFailure:
      return "clock failure";
    case Status::kStorageRollback:
      return "storage rolled back";
    case Status::kQueueFull:
      return "report queue full";
    case Status::kMemoTableFull:
      return "memoized value table full";
    case Status::kTransportFailure:
      return "transport failure";
    case Status::kNotBuilt:
      return "not in this build";
  }
  return "unknown status";
}

}  // namespace blur
