// Binary randomized response (Warner 1965), sampled exactly.
//
// With epsilon = n/d rational (n = epsilon_micros, d = 10^6), one round is:
//   with probability 1/2 report the truth; otherwise, with probability
//   exp(-epsilon), report its negation; otherwise start a new round.
// So P(truth) : P(negation) = 1/2 : exp(-epsilon)/2 = e^epsilon : 1, i.e.
//   P(report = truth) = e^eps / (1 + e^eps)   (MATH.md section 3),
// and the privacy loss is exactly epsilon_micros / 10^6 nats: the mechanism
// charges epsilon_micros, with nothing lost to rounding. The random draws do
// not depend on the true bit, so neither does the running time.
#ifndef BLUR_BINARY_RANDOMIZED_RESPONSE_H
#define BLUR_BINARY_RANDOMIZED_RESPONSE_H

#include "blur/epsilon.h"
#include "blur/exact_sampling.h"
#include "blur/mechanism.h"
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

  static constexpr MechanismId kId = MechanismId::kBinaryRandomizedResponse;
  static constexpr uint32_t kDomainSize = 2;
  // Each round ends with probability (1 + e^-eps)/2 >= 1/2.
  static constexpr uint32_t kMaxRounds = 64;

  // The epsilon one report realizes, rounded up to micro-nats (exact here).
  EpsilonMicros epsilon_charged() const { return epsilon_micros_; }

  template <typename Random>
  Status randomize(Random& random, bool truth, bool* out) const {
    for (uint32_t round = 0; round < kMaxRounds; ++round) {
      bool keep = false;
      BLUR_TRY(sample_bernoulli(random, 1, 2, &keep));
      if (keep) {
        *out = truth;
        return Status::kOk;
      }
      bool flip = false;
      BLUR_TRY(sample_bernoulli_exp(random, epsilon_micros_, kEpsilonMicrosPerNat, &flip));
      if (flip) {
        *out = !truth;
        return Status::kOk;
      }
    }
    return Status::kIterationCap;
  }

 private:
  explicit BinaryRandomizedResponse(EpsilonMicros epsilon_micros)
      : epsilon_micros_(epsilon_micros) {}
  EpsilonMicros epsilon_micros_;
};

}  // namespace blur

#endif  // BLUR_BINARY_RANDOMIZED_RESPONSE_H
