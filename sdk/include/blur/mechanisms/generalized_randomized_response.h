// Generalized (k-ary) randomized response, also called direct encoding or
// GRR (Wang, Blocki, Li, Jha 2017): a value in [0, k) is reported as itself
// with probability p = e^eps / (e^eps + k - 1), and as each other value with
// probability q = 1 / (e^eps + k - 1). Best among the frequency oracles when
// k < 3 e^eps + 2; the report is one index (log2 k bits).
//
// Sampled exactly by sample_randomized_response (exact_sampling.h) with the
// rational epsilon_micros / 10^6: the realized epsilon is ln(p/q) = eps
// exactly, and that is what it charges.
#ifndef BLUR_GENERALIZED_RANDOMIZED_RESPONSE_H
#define BLUR_GENERALIZED_RANDOMIZED_RESPONSE_H

#include "blur/mechanisms/domain_mechanism.h"
#include "blur/epsilon.h"
#include "blur/sampling/exact_sampling.h"
#include "blur/mechanisms/mechanism.h"
#include "blur/mechanisms/mechanism_builder.h"
#include "blur/report/report_payload.h"
#include "blur/result.h"

namespace blur {

class GeneralizedRandomizedResponse
    : public DomainMechanism<GeneralizedRandomizedResponse, MechanismId::kGeneralizedRandomizedResponse> {
 public:
  // Domains of 2 .. 2^16 values. Expected rounds per report are
  // k / (1 + (k - 1) e^-eps): large k with large eps is slow (that regime
  // belongs to local hashing anyway).


  // value in [0, domain_size); *out in [0, domain_size).
  template <typename Random>
  Status randomize(Random& random, uint32_t value, uint32_t* out) const {
    return sample_randomized_response(random, epsilon_micros_, kEpsilonMicrosPerNat, domain_size_,
                                      value, out);
  }

 private:
  friend class DomainMechanism<GeneralizedRandomizedResponse, MechanismId::kGeneralizedRandomizedResponse>;
  using DomainMechanism::DomainMechanism;
};

template <>
struct MechanismBuilder<MechanismId::kGeneralizedRandomizedResponse>
    : DomainBuilder<GeneralizedRandomizedResponse> {};

}  // namespace blur

#endif  // BLUR_GENERALIZED_RANDOMIZED_RESPONSE_H
