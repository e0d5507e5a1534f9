#include "blur/client.h"

#include "blur/compat/std_facilities.h"

#include "mbedtls/platform_util.h"
#include "report_wire.h"

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

Status AnyMechanism::set(const MechanismConfig& config) {
  set_ = false;
  id_ = config.id;
  switch (config.id) {
#define BLUR_X(id, Cpp, name, C, PROTO, Payload, max_domain) \
  case MechanismId::k##Cpp:                                 \
    return set_as<MechanismId::k##Cpp>(config);
    BLUR_MECHANISM_TABLE(BLUR_X)
#undef BLUR_X
  }
  return Status::kInvalidArgument;  // a value the table does not name
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
      // Decided on Value (equal to kWordMetric here): clang type-checks
      // `input.text` for an index metric unless the branch is discarded by it.
      if constexpr (std::is_same_v<Value, WordText>) {
        value = Word::fitted(input.text, input.size, mechanism.domain_size());
      } else {
        value = input;
      }
      if (!in_domain(mechanism, value)) return Status::kInvalidArgument;
      size_t bound = kMaxEncodedScalarReportSize;
      if constexpr (M::kPayload == PayloadKind::kBits || M::kPayload == PayloadKind::kBloom) {
        bound += 12 + mechanism.payload_bytes();
      }
      return record_drawn<IsMemoized<M>::value>(report_draw(mechanism, metric_id, value), bound);
    }
  });
}

// Room first (nothing is spent on a report that could not be queued), then
// the durable charge and the randomization, then the append: once per kind
// of mechanism, not per mechanism.
template <bool kMemoized>
Status Client::record_drawn(const ReportDraw& draw, size_t bound) {
  BLUR_TRY(queue_.has_room(bound));
  if constexpr (kMemoized) {
    BLUR_TRY(ledger_.check_memoized(draw.epsilon, draw.metric_id, draw.config_digest));
  } else {
    BLUR_TRY(ledger_.check(draw.epsilon, draw.metric_id));
  }
  BLUR_TRY(make_drawn_report<kMemoized>(ledger_, rng_, draw, &report_));
  if constexpr (kObservedTimeBuilt) report_.observed_minute = observed_minute(port_);
  size_t size = 0;
  // Only the payload forms of this build's mechanisms are converted.
  BLUR_TRY(encode_report_with(&report_to_wire<built_wire_forms()>, report_, message_,
                              sizeof message_, &size));
  return queue_.append(report_.report_id, message_, size);
}

Status Client::pending_batch(uint8_t* buffer, size_t capacity, size_t* written, size_t* count,
                             uint64_t* ack_token) const {
  if (!ready_ || !ledger_.is_open()) return Status::kLedgerClosed;
  return queue_.pending_batch(ledger_.device_nonce(), kMaxReportsPerBatch, buffer, capacity,
                              written, count, ack_token);
}

}  // namespace blur
