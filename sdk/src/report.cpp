#include "blur/report.h"

namespace blur {

Status report_binary(Ledger& ledger, Rng& rng, const BinaryRandomizedResponse& mechanism,
                     uint32_t metric_id, bool value, Report* out) {
  if (out == nullptr) return Status::kInvalidArgument;
  if (!rng.seeded()) return Status::kEntropyFailure;  // before spending anything
  uint64_t report_id = 0;
  BLUR_TRY(ledger.charge(mechanism.epsilon_charged(), &report_id));
  bool randomized = false;
  BLUR_TRY(mechanism.randomize(rng, value, &randomized));
  *out = Report{report_id,
                metric_id,
                BinaryRandomizedResponse::kId,
                mechanism.epsilon_charged(),
                BinaryRandomizedResponse::kDomainSize,
                randomized};
  return Status::kOk;
}

}  // namespace blur
