// Local hashing (Wang, Blocki, Li, Jha 2017): the device hashes its value
// into g buckets with a hash drawn from a public family and reports the
// hash's seed with the bucket after k-ary randomized response over [0, g).
// OLH picks g close to e^eps + 1 (optimal variance); BLH uses g = 2.
//
// The family is exactly pairwise independent and uniform: over the field
// GF(2^k), k = max(ceil(log2 domain), log2 g), with seed (a, b) uniform in
// GF(2^k)^2,
//   h_{a,b}(v) = top log2(g) bits of (a * v + b),
// so for v != v', P(h(v) = h(v')) = 1/g exactly (a * (v + v') is uniform).
// A report supports v iff h_{a,b}(v) = y; p = e^eps / (e^eps + g - 1) and
// q = 1/g. g is a power of two here (2^round(log2(e^eps + 1)), at most
// 256): a choice that costs at most a few percent of variance against the
// real-valued optimum, and makes the hash exactly uniform. The collector
// aggregates reports by (a, y xor top(b)) and evaluates a * v once per
// distinct a, not once per report.
//
// Exact: (a, b) are uniform draws and y is sample_randomized_response at the
// rational epsilon_micros / 10^6, so the realized epsilon is the configured
// one (for every seed, the bucket probabilities differ by at most e^eps),
// and that is the charge.
#ifndef BLUR_LOCAL_HASHING_H
#define BLUR_LOCAL_HASHING_H

#include "blur/mechanisms/domain_mechanism.h"
#include "blur/epsilon.h"
#include "blur/sampling/exact_sampling.h"
#include "blur/mechanisms/mechanism.h"
#include "blur/mechanisms/mechanism_builder.h"
#include "blur/report/report_payload.h"
#include "blur/result.h"

namespace blur {

// Irreducible polynomials of GF(2^k), k = 1..12 (bit i = coefficient of x^i).
inline constexpr uint32_t kGf2Polynomials[13] = {0,    0x3,   0x7,   0xB,   0x13,  0x25,  0x43,
                                                 0x83, 0x11B, 0x211, 0x409, 0x805, 0x1053};

// a * b in GF(2^k): carry-less product, reduced by kGf2Polynomials[k].
inline constexpr uint32_t gf2_multiply(uint32_t a, uint32_t b, uint32_t k) {
  uint32_t product = 0;
  for (uint32_t i = 0; i < k; ++i) {
    if ((b >> i) & 1u) product ^= a << i;
  }
  for (uint32_t bit = 2 * k - 2; bit >= k && bit < 2 * k; --bit) {
    if ((product >> bit) & 1u) product ^= kGf2Polynomials[k] << (bit - k);
  }
  return product;
}

struct LocalHashShape {
  uint32_t field_bits;   // k
  uint32_t bucket_bits;  // log2 g
};

class LocalHashing {
 public:
  enum class Kind : uint8_t { kOptimized, kBinary };
  static constexpr uint32_t kMaxDomainSize =
      mechanism_max_domain(MechanismId::kOptimizedLocalHashing);
  static_assert(kMaxDomainSize == mechanism_max_domain(MechanismId::kBinaryLocalHashing));
  static constexpr uint32_t kMaxBucketBits = 8;
  static constexpr PayloadKind kPayload = mechanism_payload(MechanismId::kOptimizedLocalHashing);

  // log2 g for OLH: round(log2(e^eps + 1)), from the thresholds
  // ln(2^{m + 1/2} - 1) in micro-nats (the choice affects variance only).
  static constexpr uint32_t optimized_bucket_bits(EpsilonMicros epsilon_micros) {
    constexpr EpsilonMicros kThresholds[] = {603456,  1538340, 2333474, 3073962,
                                             3789965, 4494347, 5193064};
    uint32_t bits = 1;
    for (EpsilonMicros threshold : kThresholds) bits += epsilon_micros >= threshold ? 1 : 0;
    return bits;
  }

  static constexpr LocalHashShape shape(Kind kind, EpsilonMicros epsilon_micros,
                                        uint32_t domain_size) {
    const uint32_t bucket_bits = kind == Kind::kBinary ? 1 : optimized_bucket_bits(epsilon_micros);
    uint32_t field_bits = 1;
    while ((1u << field_bits) < domain_size) ++field_bits;
    return LocalHashShape{field_bits < bucket_bits ? bucket_bits : field_bits, bucket_bits};
  }

  static Result<LocalHashing> create(Kind kind, EpsilonMicros epsilon_micros,
                                     uint32_t domain_size) {
    if (!valid_mechanism_config(epsilon_micros, domain_size, kMaxDomainSize)) {
      return Status::kInvalidArgument;
    }
    return LocalHashing(kind, epsilon_micros, domain_size);
  }

  MechanismId id() const {
    return kind_ == Kind::kOptimized ? MechanismId::kOptimizedLocalHashing
                                     : MechanismId::kBinaryLocalHashing;
  }
  uint32_t domain_size() const { return domain_size_; }
  EpsilonMicros epsilon_charged() const { return epsilon_micros_; }
  LocalHashShape shape() const { return shape(kind_, epsilon_micros_, domain_size_); }

  // *seed = a << 16 | b; *bucket = y in [0, g).
  template <typename Random>
  Status randomize(Random& random, uint32_t value, uint32_t* seed, uint32_t* bucket) const {
    if (value >= domain_size_) return Status::kInvalidArgument;
    const LocalHashShape s = shape();
    uint64_t a = 0, b = 0;
    BLUR_TRY(random.uniform(uint64_t{1} << s.field_bits, &a));
    BLUR_TRY(random.uniform(uint64_t{1} << s.field_bits, &b));
    const uint32_t hashed =
        (gf2_multiply(static_cast<uint32_t>(a), value, s.field_bits) ^ static_cast<uint32_t>(b)) >>
        (s.field_bits - s.bucket_bits);
    BLUR_TRY(sample_randomized_response(random, epsilon_micros_, kEpsilonMicrosPerNat,
                                        1u << s.bucket_bits, hashed, bucket));
    *seed = static_cast<uint32_t>(a << 16 | b);
    return Status::kOk;
  }

 private:
  LocalHashing(Kind kind, EpsilonMicros epsilon_micros, uint32_t domain_size)
      : kind_(kind), epsilon_micros_(epsilon_micros), domain_size_(domain_size) {}
  Kind kind_;
  EpsilonMicros epsilon_micros_;
  uint32_t domain_size_;
};

template <>
struct MechanismBuilder<MechanismId::kOptimizedLocalHashing> {
  static Result<LocalHashing> create(const MechanismConfig& config) {
    return LocalHashing::create(LocalHashing::Kind::kOptimized, config.epsilon_micros,
                                config.domain_size);
  }
};
template <>
struct MechanismBuilder<MechanismId::kBinaryLocalHashing> {
  static Result<LocalHashing> create(const MechanismConfig& config) {
    return LocalHashing::create(LocalHashing::Kind::kBinary, config.epsilon_micros,
                                config.domain_size);
  }
};

}  // namespace blur

#endif  // BLUR_LOCAL_HASHING_H
