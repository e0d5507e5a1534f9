#include "blur/client.h"

#include <new>
#include <type_traits>

#include "mbedtls/platform_util.h"

namespace blur {

namespace {
// The port clock's whole minutes for Report::observed_minute; 0 (absent on
// the wire) without a clock, on a clock failure or past the field's range.
[[maybe_unused]] uint32_t observed_minute(const Port& port) {
  uint64_t seconds = 0;
  if (port.now == nullptr || port.now(port.context, &seconds) != Status::kOk) return 0;
  const uint64_t minutes = seconds / 60;
  return minutes > UINT32_MAX ? 0 : static_cast<uint32_t>(minutes);
}
}  // namespace

Status AnyMechanism::set(MechanismId id, EpsilonMicros epsilon_micros, uint32_t domain_size,
                         uint32_t metric_id, EpsilonMicros longitudinal_epsilon,
                         uint32_t rounding_buckets) {
  using Id = MechanismId;
  set_ = false;
  id_ = id;
  if (!is_mechanism(static_cast<uint32_t>(id))) return Status::kInvalidArgument;
  if (!mechanism_built(id)) return Status::kNotBuilt;
  if (id == Id::kLoloha) {
    if constexpr (mechanism_built(Id::kLoloha)) {
      if (longitudinal_epsilon == 0 || rounding_buckets != 0) return Status::kInvalidArgument;
      const MemoKey key{metric_id, memo_config_digest(metric_id, id, epsilon_micros, domain_size,
                                                      longitudinal_epsilon, 0)};
      return store(Loloha::create(epsilon_micros, longitudinal_epsilon, domain_size, key));
    }
    return Status::kNotBuilt;
  }
  if (longitudinal_epsilon != 0) {
    if (id != Id::kSymmetricUnaryEncoding && id != Id::kRappor && id != Id::kOneBitMean) {
      return Status::kInvalidArgument;  // symmetric bit flips and 1BitMean only
    }
    if constexpr (!kMemoizationBuilt) {
      return Status::kNotBuilt;
    } else {
      return set_memoized(id, epsilon_micros, domain_size,
                          MemoKey{metric_id, memo_config_digest(metric_id, id, epsilon_micros,
                                                                domain_size, longitudinal_epsilon,
                                                                rounding_buckets)},
                          longitudinal_epsilon, rounding_buckets);
    }
  }
  // Each case compiles only when its mechanism is in the build.
  switch (id) {
    case Id::kBinaryRandomizedResponse:
      if constexpr (mechanism_built(Id::kBinaryRandomizedResponse)) {
        if (domain_size != 2) return Status::kInvalidArgument;
        return store(BinaryRandomizedResponse::create(epsilon_micros));
      }
      break;
    case Id::kGeneralizedRandomizedResponse:
      if constexpr (mechanism_built(Id::kGeneralizedRandomizedResponse))
        return store(GeneralizedRandomizedResponse::create(epsilon_micros, domain_size));
      break;
    case Id::kSymmetricUnaryEncoding:
      if constexpr (mechanism_built(Id::kSymmetricUnaryEncoding))
        return store(
            UnaryEncoding::create(UnaryEncoding::Kind::kSymmetric, epsilon_micros, domain_size));
      break;
    case Id::kOptimizedUnaryEncoding:
      if constexpr (mechanism_built(Id::kOptimizedUnaryEncoding))
        return store(
            UnaryEncoding::create(UnaryEncoding::Kind::kOptimized, epsilon_micros, domain_size));
      break;
    case Id::kDiscreteLaplace:
      if constexpr (mechanism_built(Id::kDiscreteLaplace))
        return store(DiscreteLaplace::create(epsilon_micros, domain_size));
      break;
    case Id::kOneBitMean:
      if constexpr (mechanism_built(Id::kOneBitMean))
        return store(OneBitMean::create(epsilon_micros, domain_size));
      break;
    case Id::kHadamardResponse:
      if constexpr (mechanism_built(Id::kHadamardResponse))
        return store(HadamardResponse::create(epsilon_micros, domain_size));
      break;
    case Id::kOptimizedLocalHashing:
      if constexpr (mechanism_built(Id::kOptimizedLocalHashing))
        return store(
            LocalHashing::create(LocalHashing::Kind::kOptimized, epsilon_micros, domain_size));
      break;
    case Id::kBinaryLocalHashing:
      if constexpr (mechanism_built(Id::kBinaryLocalHashing))
        return store(
            LocalHashing::create(LocalHashing::Kind::kBinary, epsilon_micros, domain_size));
      break;
    case Id::kRappor:
      if constexpr (mechanism_built(Id::kRappor))
        return store(
            Rappor::create(epsilon_micros, domain_size, RapporShape{}, BloomHashKey{metric_id, 0}));
      break;
    case Id::kPrefixExtension:
      if constexpr (mechanism_built(Id::kPrefixExtension))
        return store(PrefixExtension::create(epsilon_micros, domain_size));
      break;
    case Id::kSequenceFragmentPuzzle:
      if constexpr (mechanism_built(Id::kSequenceFragmentPuzzle))
        return store(SequenceFragmentPuzzle::create(epsilon_micros, domain_size));
      break;
    case Id::kLoloha:
      break;  // above: always memoized
  }
  return Status::kNotBuilt;
}

Status AnyMechanism::set_memoized(MechanismId id, EpsilonMicros epsilon_micros,
                                  uint32_t domain_size, MemoKey key,
                                  EpsilonMicros longitudinal_epsilon, uint32_t rounding_buckets) {
  using Id = MechanismId;
  if constexpr (mechanism_built(Id::kOneBitMean)) {
    if (id == Id::kOneBitMean) {
      return store(MemoizedMean::create(epsilon_micros, longitudinal_epsilon, domain_size,
                                        rounding_buckets, key));
    }
  }
  if (rounding_buckets != 0) return Status::kInvalidArgument;
  if constexpr (mechanism_built(Id::kSymmetricUnaryEncoding)) {
    if (id == Id::kSymmetricUnaryEncoding) {
      const auto permanent = UnaryEncoding::create(UnaryEncoding::Kind::kSymmetric,
                                                   longitudinal_epsilon, domain_size);
      if (!permanent.ok()) return permanent.status();
      return store(Memoized<UnaryEncoding>::create(permanent.value(), epsilon_micros, key));
    }
  }
  if constexpr (mechanism_built(Id::kRappor)) {
    if (id == Id::kRappor) {
      const auto permanent = Rappor::create(longitudinal_epsilon, domain_size, RapporShape{},
                                            BloomHashKey{key.metric_id, 0});
      if (!permanent.ok()) return permanent.status();
      return store(Memoized<Rappor>::create(permanent.value(), epsilon_micros, key));
    }
  }
  return Status::kNotBuilt;
}

Status Client::open(const Port& port) {
  if (port.block_count < kLedgerBlocks) return Status::kInvalidArgument;
  return open(port, Partition{0, kLedgerBlocks},
              Partition{kLedgerBlocks, port.block_count - kLedgerBlocks});
}

Status Client::open(const Port& port, Partition ledger, Partition queue) {
  ready_ = false;
  if (partitions_overlap(ledger, queue)) return Status::kPartitionsOverlap;
  port_ = port;
  ledger_partition_ = ledger;
  static constexpr uint8_t kPersonalization[] = "blur-client";
  BLUR_TRY(rng_.seed(port, kPersonalization, sizeof kPersonalization - 1));
  BLUR_TRY(queue_.open(port, queue));
  ready_ = true;
  return ledger_.open(port, ledger);
}

Status Client::provision(const LedgerPolicy& policy) {
  if (!ready_) return Status::kInvalidArgument;
  uint64_t nonce = 0;
  BLUR_TRY(rng_.next_u64(&nonce));
  uint8_t secret[kLedgerSecretSize];
  BLUR_TRY(rng_.fill(secret, sizeof secret));
  const Status provisioned = ledger_.provision(port_, ledger_partition_, policy, nonce, secret);
  mbedtls_platform_zeroize(secret, sizeof secret);
  return provisioned;
}

static_assert(kEnrollmentSecretSize == kLedgerSecretSize, "the device key derives from the ledger's secret");

Status Client::enrollment_body(char* buffer, size_t capacity, const char* device_token) const {
  if (!ledger_.is_open()) return Status::kLedgerClosed;
  if (ledger_.secret() == nullptr) return Status::kInvalidArgument;
  return write_enrollment_body(ledger_.device_nonce(), ledger_.secret(), device_token, buffer,
                               capacity);
}

Status Client::add_metric(uint32_t metric_id, MechanismId mechanism, EpsilonMicros epsilon_micros,
                          uint32_t domain_size, EpsilonMicros longitudinal_epsilon,
                          uint32_t rounding_buckets) {
  if (metric_count_ == kMaxClientMetrics) return Status::kInvalidArgument;
  for (uint32_t i = 0; i < metric_count_; ++i) {
    if (metrics_[i].id == metric_id) return Status::kInvalidArgument;
  }
  Metric& metric = metrics_[metric_count_];
  BLUR_TRY(metric.mechanism.set(mechanism, epsilon_micros, domain_size, metric_id,
                                longitudinal_epsilon, rounding_buckets));
  // A memoized metric's id keeps its configuration for the device's life
  // (permanent_stream.h); refused here already when the ledger knows it.
  if constexpr (kMemoizationBuilt || mechanism_built(MechanismId::kLoloha)) {
    BLUR_TRY(metric.mechanism.visit([&](const auto& configured) {
      using M = std::decay_t<decltype(configured)>;
      if constexpr (IsMemoized<M>::value) {
        if (ledger_.is_open()) {
          return ledger_.check_memoized_config(metric_id, configured.key().config_digest);
        }
      }
      return Status::kOk;
    }));
  }
  metric.id = metric_id;
  ++metric_count_;
  return Status::kOk;
}

Status Client::record(uint32_t metric_id, uint32_t value) { return record_value(metric_id, value); }

Status Client::record_word(uint32_t metric_id, const char* word, size_t size) {
  if (word == nullptr && size != 0) return Status::kInvalidArgument;
  return record_value(metric_id, WordText{word, size});
}

template <typename Value>
Status Client::record_value(uint32_t metric_id, const Value& input) {
  if (!ready_) return Status::kInvalidArgument;
  const Metric* metric = nullptr;
  for (uint32_t i = 0; i < metric_count_; ++i) {
    if (metrics_[i].id == metric_id) metric = &metrics_[i];
  }
  if (metric == nullptr) return Status::kInvalidArgument;
  return metric->mechanism.visit([&](const auto& mechanism) {
    using M = std::decay_t<decltype(mechanism)>;
    constexpr bool kWordMetric = std::is_same_v<MechanismValueT<M>, Word>;
    // Text for a word metric, an index for the others.
    if constexpr (kWordMetric != std::is_same_v<Value, WordText>) {
      return Status::kInvalidArgument;
    } else {
      MechanismValueT<M> value{};
      if constexpr (kWordMetric) {
        value = Word::fitted(input.text, input.size, mechanism.domain_size());
      } else {
        value = input;
      }
      if (!in_domain(mechanism, value)) return Status::kInvalidArgument;
      // Room first (nothing is spent on a report that could not be queued),
      // then the durable charge and the randomization, then the append.
      size_t bound = kMaxEncodedScalarReportSize;
      if constexpr (M::kPayload == PayloadKind::kBits || M::kPayload == PayloadKind::kBloom) {
        bound += 12 + mechanism.payload_bytes();
      }
      BLUR_TRY(queue_.has_room(bound));
      if constexpr (IsMemoized<M>::value) {
        BLUR_TRY(ledger_.check_memoized(mechanism.epsilon_charged(), metric_id,
                                        mechanism.key().config_digest));
        BLUR_TRY(make_memoized_report(ledger_, rng_, mechanism, value, &report_));
      } else {
        BLUR_TRY(ledger_.check(mechanism.epsilon_charged(), metric_id));
        BLUR_TRY(make_report(ledger_, rng_, mechanism, metric_id, value, &report_));
      }
      if constexpr (kObservedTimeBuilt) report_.observed_minute = observed_minute(port_);
      size_t size = 0;
      BLUR_TRY(encode_report(report_, message_, sizeof message_, &size));
      return queue_.append(report_.report_id, message_, size);
    }
  });
}

Status Client::pending_batch(uint8_t* buffer, size_t capacity, size_t* written, size_t* count,
                             uint64_t* ack_token) const {
  if (!ready_ || !ledger_.is_open()) return Status::kLedgerClosed;
  return queue_.pending_batch(ledger_.device_nonce(), kMaxReportsPerBatch, buffer, capacity,
                              written, count, ack_token);
}

}  // namespace blur
