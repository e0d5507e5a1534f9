// 1BitMean (Ding, Kulkarni, Yekhanin, NeurIPS 2017): a value x in [0, M]
// (integers 0..k-1, M = k - 1) is reported as one bit, 1 with probability
//   1 / (e^eps + 1) + (x / M) (e^eps - 1) / (e^eps + 1).
// Sampled exactly as a mixture: b = Bernoulli(x / M) (rational), then b
// through binary randomized response at eps. P(1 | x) lies between
// 1/(e^eps + 1) and e^eps/(e^eps + 1) for every x, so any two inputs'
// output probabilities differ by at most e^eps: the realized epsilon is the
// configured epsilon_micros / 10^6, and that is the charge.
// The collector estimates the mean as (M / n) sum (b_i (e^eps + 1) - 1) / (e^eps - 1).
#ifndef BLUR_ONE_BIT_MEAN_H
#define BLUR_ONE_BIT_MEAN_H

#include "blur/mechanisms/domain_mechanism.h"
#include "blur/epsilon.h"
#include "blur/sampling/exact_sampling.h"
#include "blur/mechanisms/mechanism.h"
#include "blur/report/report_payload.h"
#include "blur/result.h"

namespace blur {

class OneBitMean : public DomainMechanism<OneBitMean, MechanismId::kOneBitMean> {
 public:


  template <typename Random>
  Status randomize(Random& random, uint32_t value, uint32_t* out) const {
    if (value >= domain_size_) return Status::kInvalidArgument;
    bool high = false;
    BLUR_TRY(sample_bernoulli(random, value, domain_size_ - 1, &high));
    return sample_randomized_response(random, epsilon_micros_, kEpsilonMicrosPerNat, 2,
                                      high ? 1 : 0, out);
  }

 private:
  friend class DomainMechanism<OneBitMean, MechanismId::kOneBitMean>;
  using DomainMechanism::DomainMechanism;
};

}  // namespace blur

#endif  // BLUR_ONE_BIT_MEAN_H
