// Hadamard response (Acharya, Sun, Zhang, AISTATS 2019): with K the
// smallest power of two above k, value v owns the half of [0, K) where row
// v + 1 of the K x K Sylvester-Hadamard matrix is +1:
//   S_v = { j : popcount((v + 1) & j) is even },  |S_v| = K / 2.
// A report is one j: uniform in S_v with probability e^eps / (e^eps + 1),
// else uniform in its complement. Any two rows agree on exactly half of
// [0, K), so a report supports its own value with p = e^eps / (e^eps + 1)
// and any other with q = 1/2 exactly; the collector's support counts are
// one fast Walsh-Hadamard transform of the report histogram (O(K log K)).
//
// Exact: "inside S_v" is binary randomized response at the rational
// epsilon_micros / 10^6; the element is a uniform j accepted when its
// parity matches (each try succeeds with probability 1/2; 64 tries, fails
// closed with probability 2^-64). P(j | v) / P(j | v') <= e^eps for all
// j, v, v': the realized epsilon is the configured one, and that is the
// charge. A report is one index of log2 K bits.
#ifndef BLUR_HADAMARD_RESPONSE_H
#define BLUR_HADAMARD_RESPONSE_H

#include "blur/mechanisms/domain_mechanism.h"
#include "blur/epsilon.h"
#include "blur/sampling/exact_sampling.h"
#include "blur/mechanisms/mechanism.h"
#include "blur/mechanisms/mechanism_builder.h"
#include "blur/report/report_payload.h"

namespace blur {

// The smallest power of two greater than domain_size (so rows 1..k exist).
inline constexpr uint32_t hadamard_size(uint32_t domain_size) {
  uint32_t size = 1;
  while (size <= domain_size) size <<= 1;
  return size;
}

class HadamardResponse : public DomainMechanism<HadamardResponse, MechanismId::kHadamardResponse> {
 public:
  static constexpr uint32_t kMaxTries = 64;

  uint32_t output_size() const { return hadamard_size(domain_size_); }

  // value in [0, domain_size); *out in [0, output_size()).
  template <typename Random>
  Status randomize(Random& random, uint32_t value, uint32_t* out) const {
    if (value >= domain_size_) return Status::kInvalidArgument;
    uint32_t inside = 0;
    BLUR_TRY(
        sample_randomized_response(random, epsilon_micros_, kEpsilonMicrosPerNat, 2, 1, &inside));
    const uint32_t row = value + 1;
    for (uint32_t attempt = 0; attempt < kMaxTries; ++attempt) {
      uint64_t j = 0;
      BLUR_TRY(random.uniform(output_size(), &j));
      const bool in_set = (__builtin_popcount(row & static_cast<uint32_t>(j)) & 1) == 0;
      if (in_set == (inside == 1)) {
        *out = static_cast<uint32_t>(j);
        return Status::kOk;
      }
    }
    return Status::kIterationCap;
  }

 private:
  friend class DomainMechanism<HadamardResponse, MechanismId::kHadamardResponse>;
  using DomainMechanism::DomainMechanism;
};

template <>
struct MechanismBuilder<MechanismId::kHadamardResponse> : DomainBuilder<HadamardResponse> {};

}  // namespace blur

#endif  // BLUR_HADAMARD_RESPONSE_H
