// Unary encodings (Wang, Blocki, Li, Jha 2017): a value v in [0, k) becomes
// the one-hot vector e_v, and every bit is randomized independently:
//
//   SUE (symmetric, basic one-time RAPPOR): every bit is flipped with
//       q ~ 1 / (e^{eps/2} + 1); the true bit is 1 with p = 1 - q.
//   OUE (optimized): the true bit is 1 with p = 1/2, every other bit is 1
//       with q ~ 1 / (e^eps + 1). Best variance among the unary encodings.
//
// Neighbouring inputs differ in two bits, so the loss is
// ln(p (1 - q) / ((1 - p) q)): 2 ln((1 - q) / q) for SUE, ln((1 - q) / q)
// for OUE. q is dyadic, m / 2^64 with m = flip_numerator(eps/2 or eps)
// (dyadic_bernoulli.h): the realized loss is at most the configured
// epsilon_micros and within 1e-9 nats of it, so epsilon_micros is the
// realized loss rounded up, and that is the charge. flip_probability()
// gives the collector the exact q its estimator must use.
//
// Per-bit marginals are exactly p for the true bit and q for the others
// (the bug of keeping the true bit with p + (1 - p) q cannot happen: every
// bit gets exactly one coin).
//
// A report is ceil(k / 8) bytes: bit v is bits[v / 8] >> (v % 8) & 1.
#ifndef BLUR_UNARY_ENCODING_H
#define BLUR_UNARY_ENCODING_H

#include <stddef.h>
#include <stdint.h>

#include "blur/mechanisms/domain_mechanism.h"
#include "blur/sampling/dyadic_bernoulli.h"
#include "blur/epsilon.h"
#include "blur/mechanisms/mechanism.h"
#include "blur/mechanisms/mechanism_builder.h"
#include "blur/mechanisms/memoized.h"
#include "blur/report/report_payload.h"
#include "blur/result.h"

namespace blur {

class UnaryEncoding {
 public:
  enum class Kind : uint8_t { kSymmetric, kOptimized };

  static constexpr uint32_t kMaxDomainSize =
      mechanism_max_domain(MechanismId::kSymmetricUnaryEncoding);
  static_assert(kMaxDomainSize == mechanism_max_domain(MechanismId::kOptimizedUnaryEncoding) &&
                kMaxDomainSize == kMaxBitVectorBytes * 8);
  static constexpr PayloadKind kPayload = mechanism_payload(MechanismId::kSymmetricUnaryEncoding);

  static Result<UnaryEncoding> create(Kind kind, EpsilonMicros epsilon_micros,
                                      uint32_t domain_size) {
    if (!valid_mechanism_config(epsilon_micros, domain_size, kMaxDomainSize)) {
      return Status::kInvalidArgument;
    }
    return UnaryEncoding(kind, epsilon_micros, domain_size);
  }

  // For memoized.h: the number of bits flipped, and whether every bit is
  // flipped with one probability.
  uint32_t bit_count() const { return domain_size_; }
  bool symmetric() const { return kind_ == Kind::kSymmetric; }

  MechanismId id() const {
    return kind_ == Kind::kSymmetric ? MechanismId::kSymmetricUnaryEncoding
                                     : MechanismId::kOptimizedUnaryEncoding;
  }
  uint32_t domain_size() const { return domain_size_; }
  size_t payload_bytes() const { return (domain_size_ + 7) / 8; }
  EpsilonMicros epsilon_charged() const { return epsilon_micros_; }

  // q's numerator: q = flip_numerator() / 2^64 (SUE flips every bit with q;
  // OUE sets every bit but the true one with q).
  static constexpr uint64_t flip_numerator(Kind kind, EpsilonMicros epsilon_micros) {
    return blur::flip_numerator(epsilon_micros, kind == Kind::kSymmetric
                                                    ? 2ull * kEpsilonMicrosPerNat
                                                    : uint64_t{kEpsilonMicrosPerNat});
  }

  // Writes payload_bytes() bytes to `bits` (unused high bits of the last
  // byte are zero). On failure the content of `bits` is unspecified.
  // Random: fill() (dyadic_bernoulli.h) and uniform() (rng.h).
  template <typename Random>
  Status randomize(Random& random, uint32_t value, uint8_t* bits) const {
    if (value >= domain_size_) return Status::kInvalidArgument;
    for (size_t i = 0; i < payload_bytes(); ++i) bits[i] = 0;
    BLUR_TRY(flip_bits(random, flip_numerator_, bits, domain_size_));
    const uint8_t mask = static_cast<uint8_t>(1u << (value % 8));
    if (kind_ == Kind::kSymmetric) {
      bits[value / 8] ^= mask;  // 1 xor Bernoulli(q) = Bernoulli(1 - q)
    } else {
      uint64_t coin = 0;  // p = 1/2, replacing the true bit's coin
      BLUR_TRY(random.uniform(2, &coin));
      bits[value / 8] =
          static_cast<uint8_t>(coin ? bits[value / 8] | mask : bits[value / 8] & ~mask);
    }
    return Status::kOk;
  }

 private:
  UnaryEncoding(Kind kind, EpsilonMicros epsilon_micros, uint32_t domain_size)
      : kind_(kind),
        epsilon_micros_(epsilon_micros),
        domain_size_(domain_size),
        flip_numerator_(flip_numerator(kind, epsilon_micros)) {}
  Kind kind_;
  EpsilonMicros epsilon_micros_;
  uint32_t domain_size_;
  uint64_t flip_numerator_;
};

template <>
struct MechanismBuilder<MechanismId::kSymmetricUnaryEncoding> {
  static Result<UnaryEncoding> create(const MechanismConfig& config) {
    return UnaryEncoding::create(UnaryEncoding::Kind::kSymmetric, config.epsilon_micros,
                                 config.domain_size);
  }
  static Result<Memoized<UnaryEncoding>> create_memoized(const MechanismConfig& config,
                                                         MemoKey key) {
    return memoize(UnaryEncoding::create(UnaryEncoding::Kind::kSymmetric,
                                         config.longitudinal_epsilon, config.domain_size),
                   config, key);
  }
};
template <>
struct MechanismBuilder<MechanismId::kOptimizedUnaryEncoding> {
  static Result<UnaryEncoding> create(const MechanismConfig& config) {
    return UnaryEncoding::create(UnaryEncoding::Kind::kOptimized, config.epsilon_micros,
                                 config.domain_size);
  }
};

}  // namespace blur

#endif  // BLUR_UNARY_ENCODING_H
