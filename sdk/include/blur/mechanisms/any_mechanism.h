// One configured mechanism of any kind, without heap, exceptions or RTTI:
// a tag and storage big enough for the largest mechanism object. Its
// dispatch is the mechanism table (mechanism_table.h) expanded over each
// mechanism's builder (mechanism_builder.h): nothing here names a
// mechanism but the include list below, one line per mechanism header.
#ifndef BLUR_ANY_MECHANISM_H
#define BLUR_ANY_MECHANISM_H

#include <stddef.h>
#include <stdint.h>

#include "blur/compat/std_facilities.h"

// The headers that specialize MechanismBuilder: one per mechanism (a
// missing one fails the static_assert below).
#include "blur/discovery/fragment_puzzle.h"
#include "blur/discovery/prefix_extension.h"
#include "blur/mechanisms/binary_randomized_response.h"
#include "blur/mechanisms/discrete_laplace.h"
#include "blur/mechanisms/generalized_randomized_response.h"
#include "blur/mechanisms/hadamard_response.h"
#include "blur/mechanisms/local_hashing.h"
#include "blur/mechanisms/loloha.h"
#include "blur/mechanisms/memoized_mean.h"
#include "blur/mechanisms/rappor.h"
#include "blur/mechanisms/unary_encoding.h"

#include "blur/mechanisms/mechanism_builder.h"
#include "blur/status.h"

namespace blur {

#define BLUR_X(id, Cpp, name, C, PROTO, Payload, max_domain)                           \
  static_assert(!std::is_void_v<OneShotMechanism<MechanismId::k##Cpp>> ||              \
                    !std::is_void_v<MemoizedMechanism<MechanismId::k##Cpp>>,           \
                "MechanismBuilder<k" #Cpp "> builds nothing: its header must define " \
                "create() or create_memoized() and be included above");
BLUR_MECHANISM_TABLE(BLUR_X)
#undef BLUR_X

class AnyMechanism {
 public:
  // kInvalidArgument for an unknown id or a configuration its builder
  // refuses; kNotBuilt for a mechanism left out of this build (or its
  // memoized form, without BLUR_MEMOIZATION). A longitudinal epsilon != 0
  // builds the memoized form (kInvalidArgument for a mechanism without
  // one), 0 the one-shot form (kInvalidArgument for loloha, memoized only).
  Status set(const MechanismConfig& config);
  Status set(MechanismId id, EpsilonMicros epsilon_micros, uint32_t domain_size, uint32_t metric_id,
             EpsilonMicros longitudinal_epsilon = 0, uint32_t rounding_buckets = 0) {
    return set(MechanismConfig{id, epsilon_micros, domain_size, metric_id, longitudinal_epsilon,
                               rounding_buckets, nullptr, 0});
  }
  MechanismId id() const { return id_; }
  // Calls f(mechanism) with the concrete type; returns its Status.
  // kInvalidArgument before a successful set().
  template <typename F>
  Status visit(F&& f) const;

 private:
  template <typename M>
  const M& as() const {
    return *reinterpret_cast<const M*>(storage_);
  }
  template <typename M>
  Status store(const Result<M>& built, bool memoized);
  template <MechanismId kId>
  Status set_as(const MechanismConfig& config);
  template <MechanismId kId, typename F>
  Status visit_as(F& f) const;

  static constexpr size_t kStorageSize = 80;
  alignas(8) unsigned char storage_[kStorageSize];
  MechanismId id_{};  // 0, no mechanism: a zeroed array of them needs no loop
  bool set_ = false;
  bool memoized_ = false;
};

template <typename M>
Status AnyMechanism::store(const Result<M>& built, bool memoized) {
  static_assert(sizeof(M) <= kStorageSize && alignof(M) <= 8, "AnyMechanism storage");
  static_assert(std::is_trivially_copyable_v<M>, "AnyMechanism copies its storage");
  if (!built.ok()) return built.status();
  new (storage_) M(built.value());
  set_ = true;
  memoized_ = memoized;
  return Status::kOk;
}

template <MechanismId kId>
Status AnyMechanism::set_as(const MechanismConfig& config) {
  using Builder = MechanismBuilder<kId>;
  if constexpr (!mechanism_built(kId)) {
    return Status::kNotBuilt;
  } else {
    if (config.longitudinal_epsilon == 0) {
      if constexpr (std::is_void_v<OneShotMechanism<kId>>) {
        return Status::kInvalidArgument;  // memoized only
      } else {
        return store(Builder::create(config), false);
      }
    }
    if constexpr (std::is_void_v<MemoizedMechanism<kId>>) {
      return Status::kInvalidArgument;  // no memoized form
    } else if constexpr (!kMemoizedFormBuilt<kId>) {
      return Status::kNotBuilt;
    } else {
      const MemoKey key{config.metric_id,
                        memo_config_digest(config.metric_id, kId, config.epsilon_micros,
                                           config.domain_size, config.longitudinal_epsilon,
                                           config.rounding_buckets)};
      return store(Builder::create_memoized(config, key), true);
    }
  }
}

// Only the mechanisms of this build are instantiated (mechanism_built):
// set() stores no other kind, so their cases answer kNotBuilt.
template <MechanismId kId, typename F>
Status AnyMechanism::visit_as(F& f) const {
  if constexpr (mechanism_built(kId)) {
    if constexpr (kMemoizedFormBuilt<kId>) {
      if (memoized_ || std::is_void_v<OneShotMechanism<kId>>) {
        return f(as<MemoizedMechanism<kId>>());
      }
    }
    if constexpr (!std::is_void_v<OneShotMechanism<kId>>) return f(as<OneShotMechanism<kId>>());
  }
  return Status::kNotBuilt;
}

template <typename F>
Status AnyMechanism::visit(F&& f) const {
  if (!set_) return Status::kInvalidArgument;
  switch (id_) {
#define BLUR_X(id, Cpp, name, C, PROTO, Payload, max_domain) \
  case MechanismId::k##Cpp:                                 \
    return visit_as<MechanismId::k##Cpp>(f);
    BLUR_MECHANISM_TABLE(BLUR_X)
#undef BLUR_X
  }
  return Status::kNotBuilt;
}

}  // namespace blur

#endif  // BLUR_ANY_MECHANISM_H
