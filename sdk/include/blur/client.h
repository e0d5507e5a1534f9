// A whole device in one object: DRBG, ledger, report queue and the
// configured metrics, on one port's storage, each store on its own
// Partition (by default the ledger on blocks 0..kLedgerBlocks-1, the report
// queue on the rest). record() is the safe order for a report: room in the
// queue, durable charge, randomize, durable append. The C API (blur.h) is
// a thin layer over this class.
#ifndef BLUR_CLIENT_H
#define BLUR_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "blur/mechanisms/binary_randomized_response.h"
#include "blur/config.h"
#include "blur/discovery/fragment_puzzle.h"
#include "blur/discovery/prefix_extension.h"
#include "blur/discovery/word.h"
#include "blur/enrollment.h"
#include "blur/mechanisms/discrete_laplace.h"
#include "blur/mechanisms/generalized_randomized_response.h"
#include "blur/mechanisms/hadamard_response.h"
#include "blur/storage/ledger.h"
#include "blur/mechanisms/local_hashing.h"
#include "blur/mechanisms/loloha.h"
#include "blur/mechanisms/mechanism.h"
#include "blur/mechanisms/memoized.h"
#include "blur/mechanisms/memoized_mean.h"
#include "blur/mechanisms/memoized_report.h"
#include "blur/mechanisms/one_bit_mean.h"
#include "blur/mechanisms/rappor.h"
#include "blur/report/report.h"
#include "blur/report/report_encoding.h"
#include "blur/storage/report_queue.h"
#include "blur/sampling/rng.h"
#include "blur/mechanisms/unary_encoding.h"

namespace blur {

// From config.h: BLUR_MAX_CLIENT_METRICS, BLUR_LEDGER_BLOCKS.
inline constexpr uint32_t kMaxClientMetrics = BLUR_MAX_CLIENT_METRICS;
inline constexpr uint32_t kLedgerBlocks = BLUR_LEDGER_BLOCKS;  // the queue starts after them

// One configured mechanism of any kind, without heap or RTTI: a tag and
// storage big enough for the largest mechanism object.
class AnyMechanism {
 public:
  // kInvalidArgument for an unknown id or a configuration its builder
  // refuses; kNotBuilt for a mechanism left out of this build.
  // longitudinal_epsilon != 0 memoizes (loloha, which requires it; sue,
  // rappor, onebit): the permanent response at that epsilon, each report
  // charging epsilon_micros.
  Status set(MechanismId id, EpsilonMicros epsilon_micros, uint32_t domain_size, uint32_t metric_id,
             EpsilonMicros longitudinal_epsilon = 0, uint32_t rounding_buckets = 0);
  // Calls f(mechanism) with the concrete type; returns its Status.
  template <typename F>
  Status visit(F&& f) const;

 private:
  template <typename M>
  const M& as() const {
    return *reinterpret_cast<const M*>(storage_);
  }
  template <typename M>
  Status store(const Result<M>& built);
  // set() for sue, rappor and onebit with a longitudinal epsilon.
  Status set_memoized(MechanismId id, EpsilonMicros epsilon_micros, uint32_t domain_size,
                      MemoKey key, EpsilonMicros longitudinal_epsilon, uint32_t rounding_buckets);

  static constexpr size_t kStorageSize = 80;
  alignas(8) unsigned char storage_[kStorageSize];
  MechanismId id_ = MechanismId::kBinaryRandomizedResponse;
  bool set_ = false;
  bool memoized_ = false;
};

class Client {
 public:
  Client() = default;
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Seeds the DRBG from port.entropy, opens the report queue and the ledger
  // (its status: kNotProvisioned on blank storage), each on its partition.
  // kPartitionsOverlap if the two share a block; kInvalidArgument if one
  // does not fit the port's storage.
  Status open(const Port& port, Partition ledger, Partition queue);
  // The default partitions: the ledger on the first kLedgerBlocks blocks,
  // the report queue on all the others.
  Status open(const Port& port);
  Status provision(const LedgerPolicy& policy);
  // longitudinal_epsilon != 0: memoized reports, the permanent response at
  // that epsilon and every report charging epsilon_micros, the same for
  // every value (loloha.h, which requires it; memoized.h: sue, rappor;
  // memoized_mean.h: onebit, with rounding_buckets dividing domain_size - 1).
  // kConfigurationChanged if the open ledger holds this metric id memoized
  // with another configuration (a new configuration needs a new id).
  Status add_metric(uint32_t metric_id, MechanismId mechanism, EpsilonMicros epsilon_micros,
                    uint32_t domain_size, EpsilonMicros longitudinal_epsilon = 0,
                    uint32_t rounding_buckets = 0);
  // An index in the metric's domain (every mechanism but the discovery ones).
  Status record(uint32_t metric_id, uint32_t value);
  // A word for a discovery metric (pem, sfp). Never refused for its
  // content (that would show the content): a word longer than the metric's
  // domain size (its longest word) is cut to it, and an empty word or one
  // with a character outside [a-z'] is sent as the reserved word "'"
  // (kReservedWord). kInvalidArgument only for word == nullptr with size > 0.
  Status record_word(uint32_t metric_id, const char* word, size_t size);
  // See ReportQueue::pending_batch; the token is the last id to acknowledge.
  Status pending_batch(uint8_t* buffer, size_t capacity, size_t* written, size_t* count,
                       uint64_t* ack_token) const;
  Status acknowledge(uint64_t ack_token) { return queue_.acknowledge(ack_token); }
  // The body of the collector's POST /v1/enroll for this device
  // (blur/enrollment.h: its nonce and the key derived from its device
  // secret), NUL-terminated; `device_token` (may be null) is the token a
  // collector issued it before, the proof a nonce with reports but no key
  // yet needs. kLedgerClosed before a ledger is open; kInvalidArgument for a
  // ledger provisioned without a device secret (Ledger::provision's
  // four-argument form; provision() always draws one); else
  // write_enrollment_body()'s statuses.
  Status enrollment_body(char* buffer, size_t capacity, const char* device_token = nullptr) const;

  const Ledger& ledger() const { return ledger_; }
  const ReportQueue& queue() const { return queue_; }

 private:
  struct Metric {
    uint32_t id;
    AnyMechanism mechanism;
  };
  struct WordText {  // record_word's text, fitted to the metric (Word::fitted)
    const char* text;
    size_t size;
  };
  // record() and record_word(): Value is uint32_t or WordText.
  template <typename Value>
  Status record_value(uint32_t metric_id, const Value& value);

  Port port_{};
  Partition ledger_partition_{};
  bool ready_ = false;  // DRBG seeded and queue open
  Rng rng_;
  Ledger ledger_;
  ReportQueue queue_;
  Metric metrics_[kMaxClientMetrics] = {};
  uint32_t metric_count_ = 0;
  Report report_{};                              // scratch: kept off the stack
  uint8_t message_[kMaxEncodedReportSize] = {};  // scratch
};

template <typename M>
struct IsMemoized {
  static constexpr bool value = false;
};
template <typename M>
struct IsMemoized<Memoized<M>> {
  static constexpr bool value = true;
};
template <>
struct IsMemoized<MemoizedMean> {
  static constexpr bool value = true;
};
template <>
struct IsMemoized<Loloha> {
  static constexpr bool value = true;
};

template <typename M>
Status AnyMechanism::store(const Result<M>& built) {
  static_assert(sizeof(M) <= kStorageSize && alignof(M) <= 8, "AnyMechanism storage");
  if (!built.ok()) return built.status();
  new (storage_) M(built.value());
  set_ = true;
  memoized_ = IsMemoized<M>::value;
  return Status::kOk;
}

// Only the mechanisms of this build are instantiated (mechanism_built):
// set() stores no other kind, so the left-out cases are never reached.
template <typename F>
Status AnyMechanism::visit(F&& f) const {
  using Id = MechanismId;
  if (!set_) return Status::kInvalidArgument;
  switch (id_) {
    case Id::kBinaryRandomizedResponse:
      if constexpr (mechanism_built(Id::kBinaryRandomizedResponse))
        return f(as<BinaryRandomizedResponse>());
      break;
    case Id::kGeneralizedRandomizedResponse:
      if constexpr (mechanism_built(Id::kGeneralizedRandomizedResponse))
        return f(as<GeneralizedRandomizedResponse>());
      break;
    case Id::kSymmetricUnaryEncoding:
    case Id::kOptimizedUnaryEncoding:
      if constexpr (kMemoizationBuilt && mechanism_built(Id::kSymmetricUnaryEncoding)) {
        if (memoized_) return f(as<Memoized<UnaryEncoding>>());
      }
      if constexpr (mechanism_built(Id::kSymmetricUnaryEncoding) ||
                    mechanism_built(Id::kOptimizedUnaryEncoding))
        return f(as<UnaryEncoding>());
      break;
    case Id::kDiscreteLaplace:
      if constexpr (mechanism_built(Id::kDiscreteLaplace)) return f(as<DiscreteLaplace>());
      break;
    case Id::kOneBitMean:
      if constexpr (kMemoizationBuilt && mechanism_built(Id::kOneBitMean)) {
        if (memoized_) return f(as<MemoizedMean>());
      }
      if constexpr (mechanism_built(Id::kOneBitMean)) return f(as<OneBitMean>());
      break;
    case Id::kHadamardResponse:
      if constexpr (mechanism_built(Id::kHadamardResponse)) return f(as<HadamardResponse>());
      break;
    case Id::kOptimizedLocalHashing:
    case Id::kBinaryLocalHashing:
      if constexpr (mechanism_built(Id::kOptimizedLocalHashing) ||
                    mechanism_built(Id::kBinaryLocalHashing))
        return f(as<LocalHashing>());
      break;
    case Id::kRappor:
      if constexpr (kMemoizationBuilt && mechanism_built(Id::kRappor)) {
        if (memoized_) return f(as<Memoized<Rappor>>());
      }
      if constexpr (mechanism_built(Id::kRappor)) return f(as<Rappor>());
      break;
    case Id::kPrefixExtension:
      if constexpr (mechanism_built(Id::kPrefixExtension)) return f(as<PrefixExtension>());
      break;
    case Id::kSequenceFragmentPuzzle:
      if constexpr (mechanism_built(Id::kSequenceFragmentPuzzle))
        return f(as<SequenceFragmentPuzzle>());
      break;
    case Id::kLoloha:
      if constexpr (mechanism_built(Id::kLoloha)) return f(as<Loloha>());
      break;
  }
  return Status::kNotBuilt;
}

}  // namespace blur

#endif  // BLUR_CLIENT_H
