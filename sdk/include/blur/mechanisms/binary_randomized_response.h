// Binary randomized response (Warner 1965), sampled exactly: the k = 2 case
// of sample_randomized_response (exact_sampling.h), reported as a bit.
//
//   P(report = truth) = e^eps / (1 + e^eps)   (docs/math.md §3.2)
//
// epsilon is the rational epsilon_micros / 10^6 and the sampler realizes it
// exactly, so the mechanism charges epsilon_micros with nothing lost to
// rounding.
#ifndef BLUR_BINARY_RANDOMIZED_RESPONSE_H
#define BLUR_BINARY_RANDOMIZED_RESPONSE_H

#include "blur/epsilon.h"
#include "blur/sampling/exact_sampling.h"
#include "blur/mechanisms/mechanism.h"
#include "blur/mechanisms/mechanism_builder.h"
#include "blur/report/report_payload.h"
#include "blur/result.h"

namespace blur {

class BinaryRandomizedResponse {
 public:
  // 0 < epsilon_micros <= kMaxReportEpsilonMicros, else kInvalidArgument.
  static Result<BinaryRandomizedResponse> create(EpsilonMicros epsilon_micros) {
    if (epsilon_micros == 0 || epsilon_micros > kMaxReportEpsilonMicros) {
      return Status::kInvalidArgument;
    }
    return BinaryRandomizedResponse(epsilon_micros);
  }

  MechanismId id() const { return MechanismId::kBinaryRandomizedResponse; }
  static constexpr PayloadKind kPayload = mechanism_payload(MechanismId::kBinaryRandomizedResponse);
  uint32_t domain_size() const { return 2; }

  // The epsilon one report realizes, rounded up to micro-nats (exact here).
  EpsilonMicros epsilon_charged() const { return epsilon_micros_; }

  // value in {0, 1}; *out in {0, 1}.
  template <typename Random>
  Status randomize(Random& random, uint32_t value, uint32_t* out) const {
    return sample_randomized_response(random, epsilon_micros_, kEpsilonMicrosPerNat, 2, value, out);
  }

 private:
  explicit BinaryRandomizedResponse(EpsilonMicros epsilon_micros)
      : epsilon_micros_(epsilon_micros) {}
  EpsilonMicros epsilon_micros_;
};

template <>
struct MechanismBuilder<MechanismId::kBinaryRandomizedResponse> {
  static Result<BinaryRandomizedResponse> create(const MechanismConfig& config) {
    if (config.domain_size != 2) return Status::kInvalidArgument;
    return BinaryRandomizedResponse::create(config.epsilon_micros);
  }
};

}  // namespace blur

#endif  // BLUR_BINARY_RANDOMIZED_RESPONSE_H
