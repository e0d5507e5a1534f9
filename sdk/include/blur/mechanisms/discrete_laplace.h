// Local discrete Laplace on an integer grid: a value x in [0, k) (in grid
// units; the caller clamps and quantizes onto the grid first) is reported
// as x + Z with P(Z = z) proportional to exp(-eps |z| / (k - 1)).
//
// The sensitivity is the whole range, k - 1 grid units, so for any two
// inputs the output probabilities differ by at most exp(eps): quantizing
// before adding noise makes the sensitivity exact in grid units (the
// grid-rounding issue of docs/math.md §3.8 does not arise). Z is sampled
// exactly (CKS20, sample_discrete_laplace with t = 10^6 (k - 1),
// s = epsilon_micros), so the realized epsilon is epsilon_micros / 10^6,
// and that is the charge. The mean of the reports estimates the mean of the
// values without bias: Var(Z) = 2 r / (1 - r)^2, r = exp(-eps / (k - 1)).
#ifndef BLUR_DISCRETE_LAPLACE_H
#define BLUR_DISCRETE_LAPLACE_H

#include "blur/mechanisms/domain_mechanism.h"
#include "blur/epsilon.h"
#include "blur/sampling/exact_sampling.h"
#include "blur/mechanisms/mechanism.h"
#include "blur/mechanisms/mechanism_builder.h"
#include "blur/report/report_payload.h"
#include "blur/result.h"

namespace blur {

class DiscreteLaplace : public DomainMechanism<DiscreteLaplace, MechanismId::kDiscreteLaplace> {
 public:
  // 2 .. 2^24 grid points: keeps 10^6 (k - 1) within the sampler's bounds.


  template <typename Random>
  Status randomize(Random& random, uint32_t value, int64_t* out) const {
    if (value >= domain_size_) return Status::kInvalidArgument;
    int64_t noise = 0;
    BLUR_TRY(sample_discrete_laplace(random, uint64_t{kEpsilonMicrosPerNat} * (domain_size_ - 1),
                                     epsilon_micros_, &noise));
    *out = static_cast<int64_t>(value) + noise;
    return Status::kOk;
  }

 private:
  friend class DomainMechanism<DiscreteLaplace, MechanismId::kDiscreteLaplace>;
  using DomainMechanism::DomainMechanism;
};

template <>
struct MechanismBuilder<MechanismId::kDiscreteLaplace> : DomainBuilder<DiscreteLaplace> {};

}  // namespace blur

#endif  // BLUR_DISCRETE_LAPLACE_H
