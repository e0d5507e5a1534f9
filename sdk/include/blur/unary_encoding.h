// Unary encodings (Wang, Blocki, Li, Jha 2017): a value v in [0, k) becomes
// the one-hot vector e_v, and every bit is randomized independently:
//
//   SUE (symmetric, basic one-time RAPPOR): each bit goes through binary
//       randomized response at eps/2: p = e^{eps/2} / (e^{eps/2} + 1), q = 1 - p.
//   OUE (optimized): the true bit is 1 with p = 1/2, every other bit is 1
//       with q = 1 / (e^eps + 1). Best variance among the unary encodings.
//
// Neighbouring inputs differ in two bits, so the loss is
// ln(p (1 - q) / ((1 - p) q)) = eps for both. Both are sampled exactly with
// the rational epsilon_micros / 10^6 (eps/2 as epsilon_micros / (2 10^6)),
// so the realized epsilon is the configured one and that is the charge.
// Per-bit marginals are exactly p for the true bit and q for the others
// (the bug of keeping the true bit with p + (1 - p) q cannot happen: the
// true bit is sampled once, from its own distribution).
//
// A report is ceil(k / 8) bytes: bit v is bits[v / 8] >> (v % 8) & 1.
#ifndef BLUR_UNARY_ENCODING_H
#define BLUR_UNARY_ENCODING_H

#include <stddef.h>
#include <stdint.h>

#include "blur/domain_mechanism.h"
#include "blur/epsilon.h"
#include "blur/exact_sampling.h"
#include "blur/mechanism.h"
#include "blur/report_payload.h"
#include "blur/result.h"

namespace blur {

class UnaryEncoding {
 public:
  enum class Kind : uint8_t { kSymmetric, kOptimized };

  static constexpr uint32_t kMaxDomainSize = kMaxBitVectorBytes * 8;
  static constexpr PayloadKind kPayload = PayloadKind::kBitVector;

  static Result<UnaryEncoding> create(Kind kind, EpsilonMicros epsilon_micros,
                                      uint32_t domain_size) {
    if (!valid_mechanism_config(epsilon_micros, domain_size, kMaxDomainSize)) {
      return Status::kInvalidArgument;
    }
    return UnaryEncoding(kind, epsilon_micros, domain_size);
  }

  MechanismId id() const {
    return kind_ == Kind::kSymmetric ? MechanismId::kSymmetricUnaryEncoding
                                     : MechanismId::kOptimizedUnaryEncoding;
  }
  uint32_t domain_size() const { return domain_size_; }
  size_t payload_bytes() const { return (domain_size_ + 7) / 8; }
  EpsilonMicros epsilon_charged() const { return epsilon_micros_; }

  // Writes payload_bytes() bytes to `bits` (unused high bits of the last
  // byte are zero). On failure the content of `bits` is unspecified.
  template <typename Random>
  Status randomize(Random& random, uint32_t value, uint8_t* bits) const {
    if (value >= domain_size_) return Status::kInvalidArgument;
    for (size_t i = 0; i < payload_bytes(); ++i) bits[i] = 0;
    for (uint32_t v = 0; v < domain_size_; ++v) {
      uint32_t bit = 0;
      if (kind_ == Kind::kSymmetric) {
        // Binary randomized response at eps/2 on the one-hot bit.
        BLUR_TRY(sample_randomized_response(random, epsilon_micros_, 2ull * kEpsilonMicrosPerNat, 2,
                                            v == value ? 1 : 0, &bit));
      } else if (v == value) {
        uint64_t coin = 0;  // p = 1/2
        BLUR_TRY(random.uniform(2, &coin));
        bit = static_cast<uint32_t>(coin);
      } else {
        // 1 with probability 1 / (e^eps + 1): randomized response of a 0.
        BLUR_TRY(
            sample_randomized_response(random, epsilon_micros_, kEpsilonMicrosPerNat, 2, 0, &bit));
      }
      bits[v / 8] = static_cast<uint8_t>(bits[v / 8] | (bit << (v % 8)));
    }
    return Status::kOk;
  }

 private:
  UnaryEncoding(Kind kind, EpsilonMicros epsilon_micros, uint32_t domain_size)
      : kind_(kind), epsilon_micros_(epsilon_micros), domain_size_(domain_size) {}
  Kind kind_;
  EpsilonMicros epsilon_micros_;
  uint32_t domain_size_;
};

}  // namespace blur

#endif  // BLUR_UNARY_ENCODING_H
