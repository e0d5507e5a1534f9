// RAPPOR-style Bloom-filter reports (Erlingsson, Pihur, Korolova, CCS 2014),
// one-time form: the value's Bloom filter B (k bits, h positions from the
// keyed hash of bloom_hash.h in a cohort drawn uniformly per report), then
// every bit flipped independently with probability q. That is RAPPOR's
// permanent randomized response with f = 2q, sampled fresh per report; the
// memoized form (the same noisy filter for a value, derived from a device
// secret) belongs to the longitudinal layer.
//
// Privacy: two values' filters differ in at most 2h bits, each with
// likelihood ratio (1 - q) / q, so eps = 2h ln((1 - q) / q) (RAPPOR's
// eps_inf = 2h ln((2 - f) / f)). q = m / 2^64 with
// m = flip_numerator(eps / (2h)) (dyadic_bernoulli.h): the realized loss is
// at most epsilon_micros and within 1e-8 nats of it, so epsilon_micros is
// the realized loss rounded up, and that is the charge.
//
// Strings: randomize_string() takes any bytes; randomize() takes an integer
// candidate index and hashes its decimal text. The collector estimates the
// count of each candidate it is given (integers 0..domain_size-1 here).
// A report is ceil(k / 8) bytes of filter plus the cohort.
#ifndef BLUR_RAPPOR_H
#define BLUR_RAPPOR_H

#include <stddef.h>
#include <stdint.h>

#include "blur/mechanisms/bloom_hash.h"
#include "blur/mechanisms/domain_mechanism.h"
#include "blur/sampling/dyadic_bernoulli.h"
#include "blur/epsilon.h"
#include "blur/mechanisms/mechanism.h"
#include "blur/mechanisms/mechanism_builder.h"  // RapporShape
#include "blur/mechanisms/memoized.h"
#include "blur/report/report_payload.h"
#include "blur/result.h"

namespace blur {

class Rappor {
 public:
  static constexpr PayloadKind kPayload = mechanism_payload(MechanismId::kRappor);
  static constexpr uint32_t kMaxDomainSize = mechanism_max_domain(MechanismId::kRappor);

  static constexpr bool valid_shape(RapporShape shape) {
    return shape.bloom_bits >= 8 && shape.bloom_bits <= 8 * kMaxBitVectorBytes &&
           (shape.bloom_bits & (shape.bloom_bits - 1)) == 0 && shape.hash_count >= 1 &&
           shape.hash_count <= kMaxBloomHashes && shape.cohort_count >= 1 &&
           shape.cohort_count <= 65536;
  }

  // kInvalidArgument unless the epsilon and domain size pass
  // valid_mechanism_config and the shape passes valid_shape.
  static Result<Rappor> create(EpsilonMicros epsilon_micros, uint32_t domain_size,
                               RapporShape shape, BloomHashKey key) {
    if (!valid_mechanism_config(epsilon_micros, domain_size, kMaxDomainSize) ||
        !valid_shape(shape)) {
      return Status::kInvalidArgument;
    }
    return Rappor(epsilon_micros, domain_size, shape, key);
  }

  // q = flip_numerator() / 2^64: ln((1 - q) / q) <= eps / (2h).
  static constexpr uint64_t flip_numerator(EpsilonMicros epsilon_micros, uint32_t hash_count) {
    return blur::flip_numerator(epsilon_micros, 2ull * hash_count * kEpsilonMicrosPerNat);
  }

  // For memoized.h (see UnaryEncoding).
  uint32_t bit_count() const { return shape_.bloom_bits; }
  bool symmetric() const { return true; }

  MechanismId id() const { return MechanismId::kRappor; }
  uint32_t domain_size() const { return domain_size_; }
  EpsilonMicros epsilon_charged() const { return epsilon_micros_; }
  RapporShape shape() const { return shape_; }
  BloomHashKey key() const { return key_; }
  size_t payload_bytes() const { return shape_.bloom_bits / 8; }

  // Randomizes the candidate `value` (< domain_size), hashed as decimal text.
  template <typename Random>
  Status randomize(Random& random, uint32_t value, uint32_t* cohort, uint8_t* bits) const {
    if (value >= domain_size_) return Status::kInvalidArgument;
    char text[10];
    const size_t length = decimal_text(value, text);
    return randomize_string(random, reinterpret_cast<const uint8_t*>(text), length, cohort, bits);
  }

  // Writes the cohort (drawn per report) and payload_bytes() bytes of
  // randomized filter.
  template <typename Random>
  Status randomize_string(Random& random, const uint8_t* value, size_t length, uint32_t* cohort,
                          uint8_t* bits) const {
    uint64_t drawn = 0;
    BLUR_TRY(random.uniform(shape_.cohort_count, &drawn));
    BLUR_TRY(filter(random, static_cast<uint32_t>(drawn), value, length, bits));
    *cohort = static_cast<uint32_t>(drawn);
    return Status::kOk;
  }

  // The candidate `value`'s randomized filter in a given cohort (< the
  // cohort count): memoized RAPPOR keeps one cohort per device and metric.
  template <typename Random>
  Status randomize_in_cohort(Random& random, uint32_t cohort, uint32_t value,
                             uint8_t* bits) const {
    if (value >= domain_size_ || cohort >= shape_.cohort_count) return Status::kInvalidArgument;
    char text[10];
    const size_t length = decimal_text(value, text);
    return filter(random, cohort, reinterpret_cast<const uint8_t*>(text), length, bits);
  }

 private:
  template <typename Random>
  Status filter(Random& random, uint32_t cohort, const uint8_t* value, size_t length,
                uint8_t* bits) const {
    uint16_t positions[kMaxBloomHashes];
    BLUR_TRY(bloom_positions(key_, cohort, value, length, shape_.bloom_bits, shape_.hash_count,
                             positions));
    for (size_t i = 0; i < payload_bytes(); ++i) bits[i] = 0;
    for (uint32_t j = 0; j < shape_.hash_count; ++j) {
      bits[positions[j] / 8] =
          static_cast<uint8_t>(bits[positions[j] / 8] | 1u << (positions[j] % 8));
    }
    return flip_bits(random, flip_numerator_, bits, shape_.bloom_bits);
  }

  Rappor(EpsilonMicros epsilon_micros, uint32_t domain_size, RapporShape shape, BloomHashKey key)
      : epsilon_micros_(epsilon_micros),
        domain_size_(domain_size),
        shape_(shape),
        key_(key),
        flip_numerator_(flip_numerator(epsilon_micros, shape.hash_count)) {}
  EpsilonMicros epsilon_micros_;
  uint32_t domain_size_;
  RapporShape shape_;
  BloomHashKey key_;
  uint64_t flip_numerator_;
};

template <>
struct MechanismBuilder<MechanismId::kRappor> {
  static Result<Rappor> create(const MechanismConfig& config) {
    return create_at(config.epsilon_micros, config);
  }
  static Result<Memoized<Rappor>> create_memoized(const MechanismConfig& config, MemoKey key) {
    return memoize(create_at(config.longitudinal_epsilon, config), config, key);
  }

 private:
  static Result<Rappor> create_at(EpsilonMicros epsilon_micros, const MechanismConfig& config) {
    return Rappor::create(epsilon_micros, config.domain_size,
                          config.rappor != nullptr ? *config.rappor : RapporShape{},
                          BloomHashKey{config.metric_id, config.hash_key});
  }
};

}  // namespace blur

#endif  // BLUR_RAPPOR_H
