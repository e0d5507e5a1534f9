// How each mechanism of the table (mechanism_table.h) is built from a
// metric's configuration. A mechanism's own header specializes
// MechanismBuilder<its id> with
//   static Result<OneShot> create(const MechanismConfig&);        one-shot reports
//   static Result<Memo> create_memoized(const MechanismConfig&, MemoKey);
//                                                                 memoized reports
// (either or both). Everything that dispatches on a MechanismId (the
// Client's AnyMechanism, the simulator, the flash-cost probe) expands the
// table over these builders, so a new mechanism is its table line, its
// header and that header's line in any_mechanism.h: a table line without a
// builder fails to compile (MechanismBuilder<id> is incomplete).
#ifndef BLUR_MECHANISM_BUILDER_H
#define BLUR_MECHANISM_BUILDER_H

#include <stdint.h>

#include "blur/compat/std_facilities.h"

#include "blur/epsilon.h"
#include "blur/mechanisms/mechanism.h"
#include "blur/mechanisms/permanent_stream.h"  // MemoKey
#include "blur/result.h"

namespace blur {

// RAPPOR's Bloom filter: part of a rappor metric's configuration.
struct RapporShape {
  uint32_t bloom_bits = 256;   // k: a power of two, 8 .. 8 * kMaxBitVectorBytes
  uint32_t hash_count = 1;     // h: 1 .. kMaxBloomHashes (rappor.h)
  uint32_t cohort_count = 64;  // cohorts: 1 .. 65536, each with its own hash functions
};

// What a metric's configuration says about its mechanism. A builder reads
// the fields its mechanism has and ignores the others.
struct MechanismConfig {
  MechanismId id;
  EpsilonMicros epsilon_micros;  // what each report charges
  uint32_t domain_size;
  uint32_t metric_id;
  // Memoized reports: the permanent response's epsilon; 0 for one-shot.
  EpsilonMicros longitudinal_epsilon = 0;
  uint32_t rounding_buckets = 0;          // memoized onebit (memoized_mean.h)
  const RapporShape* rappor = nullptr;     // rappor; null: RapporShape's defaults
  uint64_t hash_key = 0;                   // rappor: BloomHashKey's key beside metric_id
};

template <MechanismId kId>
struct MechanismBuilder;  // specialized in each mechanism's header

// The builder of a mechanism configured by (epsilon, domain size) alone
// (domain_mechanism.h): `template <> struct MechanismBuilder<id> :
// DomainBuilder<Its> {};`.
template <typename Mechanism>
struct DomainBuilder {
  static Result<Mechanism> create(const MechanismConfig& config) {
    return Mechanism::create(config.epsilon_micros, config.domain_size);
  }
};

namespace mechanism_builder_detail {
template <typename Builder, typename = void>
struct OneShot {
  using type = void;
};
template <typename Builder>
struct OneShot<Builder, std::void_t<decltype(Builder::create(std::declval<const MechanismConfig&>()))>> {
  using type = typename decltype(Builder::create(std::declval<const MechanismConfig&>()))::value_type;
};
template <typename Builder, typename = void>
struct Memo {
  using type = void;
};
template <typename Builder>
struct Memo<Builder, std::void_t<decltype(Builder::create_memoized(
                         std::declval<const MechanismConfig&>(), std::declval<MemoKey>()))>> {
  using type = typename decltype(Builder::create_memoized(std::declval<const MechanismConfig&>(),
                                                          std::declval<MemoKey>()))::value_type;
};
}  // namespace mechanism_builder_detail

// The one-shot and memoized types of a mechanism; void where it has none
// (loloha is memoized only; most have no memoized form).
template <MechanismId kId>
using OneShotMechanism =
    typename mechanism_builder_detail::OneShot<MechanismBuilder<kId>>::type;
template <MechanismId kId>
using MemoizedMechanism = typename mechanism_builder_detail::Memo<MechanismBuilder<kId>>::type;

// Whether the memoized form is compiled in: always for a memoized-only
// mechanism (loloha), else with config.h's BLUR_MEMOIZATION.
template <MechanismId kId>
inline constexpr bool kMemoizedFormBuilt =
    !std::is_void_v<MemoizedMechanism<kId>> &&
    (kMemoizationBuilt || std::is_void_v<OneShotMechanism<kId>>);

}  // namespace blur

#endif  // BLUR_MECHANISM_BUILDER_H
