// LOLOHA, longitudinal local hashing (Arcolezi, Pinzón, Palamidessi, Gambs,
// "Frequency estimation of evolving data under local differential privacy",
// EDBT 2023, arXiv 2210.00262): the frequency mechanism for a value a
// device reports again and again.
//
// Once per device and metric configuration the device draws a hash
// h_{a,b}: [d] -> [g] from local_hashing.h's family (seed from the secret's
// kHashStreamValue stream). For each bucket x it keeps a permanent response
// P[x] = g-ary randomized response of x at the longitudinal epsilon eps_inf,
// drawn once from PermanentStream(secret, metric, x): only the secret is
// stored. Each report of value v sends the seed and y = g-ary randomized
// response of P[h(v)] at the report epsilon eta (fresh DRBG randomness).
//
// Privacy: y's loss with respect to the permanent response is eta exactly
// (the exact sampler at the rational eta), whatever the two entries, and
// the table P and the seed are drawn independently of the history. So for
// any two histories h, h' the reports' loss is at most
// eta * #{t : h_t != h'_t}: every report charges eta, the same for every
// value (docs/math.md §5.2). In addition, repeated reports of an unchanging
// value reveal at most eps_inf about it (post-processing of P[h(v)]).
//
// The collector: a report supports v iff h_{a,b}(v) = y, with
// p = p1 p2 + (1 - p1) q2 and q = 1/g (p1 = e^eps_inf / (e^eps_inf + g - 1),
// p2 = e^eta / (e^eta + g - 1), q2 = 1 / (e^eta + g - 1)); the seed is
// uniform and h pairwise independent, so another value is supported with
// probability exactly 1/g. g is a power of two: OLH's rule at eta
// (LocalHashing::optimized_bucket_bits), so g = 2 for eta < 0.6.
#ifndef BLUR_LOLOHA_H
#define BLUR_LOLOHA_H

#include <stdint.h>

#include "blur/epsilon.h"
#include "blur/mechanisms/domain_mechanism.h"
#include "blur/mechanisms/local_hashing.h"
#include "blur/mechanisms/mechanism_builder.h"
#include "blur/mechanisms/permanent_stream.h"
#include "blur/report/report_payload.h"
#include "blur/result.h"
#include "blur/sampling/exact_sampling.h"

namespace blur {

class Loloha {
 public:
  static constexpr PayloadKind kPayload = mechanism_payload(MechanismId::kLoloha);
  static constexpr uint32_t kMaxDomainSize = mechanism_max_domain(MechanismId::kLoloha);

  // The hash family's field and the bucket bits, for the collector too.
  static constexpr LocalHashShape shape(EpsilonMicros report_epsilon, uint32_t domain_size) {
    return LocalHashing::shape(LocalHashing::Kind::kOptimized, report_epsilon, domain_size);
  }

  // kInvalidArgument unless (report_epsilon, domain_size) and
  // (longitudinal_epsilon, domain_size) pass valid_mechanism_config.
  static Result<Loloha> create(EpsilonMicros report_epsilon, EpsilonMicros longitudinal_epsilon,
                               uint32_t domain_size, MemoKey key) {
    if (!valid_mechanism_config(report_epsilon, domain_size, kMaxDomainSize) ||
        !valid_mechanism_config(longitudinal_epsilon, domain_size, kMaxDomainSize)) {
      return Status::kInvalidArgument;
    }
    return Loloha(report_epsilon, longitudinal_epsilon, domain_size, key);
  }

  MechanismId id() const { return MechanismId::kLoloha; }
  uint32_t domain_size() const { return domain_size_; }
  EpsilonMicros epsilon_charged() const { return report_epsilon_; }
  EpsilonMicros longitudinal_epsilon() const { return longitudinal_epsilon_; }
  MemoKey key() const { return key_; }
  LocalHashShape shape() const { return shape(report_epsilon_, domain_size_); }

  // out->seed = a << 16 | b (the same for every report of this device and
  // metric), out->value = y in [0, g).
  template <typename Random>
  Status randomize(Random& random, const uint8_t* secret, uint32_t value,
                   ReportPayload* out) const {
    if (secret == nullptr || value >= domain_size_) return Status::kInvalidArgument;
    const LocalHashShape s = shape();
    const uint32_t buckets = 1u << s.bucket_bits;
    uint64_t a = 0, b = 0;
    {
      PermanentStream seed_random(secret, key_, kHashStreamValue);
      BLUR_TRY(seed_random.uniform(uint64_t{1} << s.field_bits, &a));
      BLUR_TRY(seed_random.uniform(uint64_t{1} << s.field_bits, &b));
    }
    const uint32_t hashed =
        (gf2_multiply(static_cast<uint32_t>(a), value, s.field_bits) ^ static_cast<uint32_t>(b)) >>
        (s.field_bits - s.bucket_bits);
    uint32_t permanent = 0;
    {
      PermanentStream permanent_random(secret, key_, hashed);
      BLUR_TRY(sample_randomized_response(permanent_random, longitudinal_epsilon_,
                                          kEpsilonMicrosPerNat, buckets, hashed, &permanent));
    }
    BLUR_TRY(sample_randomized_response(random, report_epsilon_, kEpsilonMicrosPerNat, buckets,
                                        permanent, &out->value));
    out->seed = static_cast<uint32_t>(a << 16 | b);
    return Status::kOk;
  }

 private:
  Loloha(EpsilonMicros report_epsilon, EpsilonMicros longitudinal_epsilon, uint32_t domain_size,
         MemoKey key)
      : report_epsilon_(report_epsilon),
        longitudinal_epsilon_(longitudinal_epsilon),
        domain_size_(domain_size),
        key_(key) {}
  EpsilonMicros report_epsilon_;
  EpsilonMicros longitudinal_epsilon_;
  uint32_t domain_size_;
  MemoKey key_;
};

// Memoized only: a loloha metric needs a longitudinal epsilon.
template <>
struct MechanismBuilder<MechanismId::kLoloha> {
  static Result<Loloha> create_memoized(const MechanismConfig& config, MemoKey key) {
    if (config.rounding_buckets != 0) return Status::kInvalidArgument;
    return Loloha::create(config.epsilon_micros, config.longitudinal_epsilon, config.domain_size,
                          key);
  }
};

}  // namespace blur

#endif  // BLUR_LOLOHA_H
