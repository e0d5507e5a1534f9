#include "simulated_device.h"

#include <algorithm>
#include <vector>

#include "blur/report/report_encoding.h"

namespace blur::sim {

Result<DeviceMechanism> device_mechanism(const collector::MetricConfig& metric) {
  // The one-shot form: a memoized metric's reports need a device's secret
  // (SimulatedDevice), and loloha has no other form (kInvalidArgument).
  MechanismConfig config{static_cast<MechanismId>(metric.mechanism), metric.epsilon_micros,
                         metric.domain_size, metric.id};
  config.rappor = &metric.rappor;
  config.hash_key = metric.hash_key;
  DeviceMechanism mechanism;
  BLUR_TRY(mechanism.set(config));
  return mechanism;
}

EpsilonMicros epsilon_charged(const DeviceMechanism& mechanism) {
  EpsilonMicros charged = 0;
  (void)mechanism.visit([&](const auto& m) {
    charged = m.epsilon_charged();
    return Status::kOk;
  });
  return charged;
}

namespace {
// One randomization of a Value (uint32_t or Word) by a one-shot mechanism
// that takes it; kInvalidArgument for the other kind.
template <typename Value>
Status randomize_value(const DeviceMechanism& mechanism, Rng& rng, const Value& value,
                       ReportPayload* out) {
  return mechanism.visit([&](const auto& m) {
    using M = std::decay_t<decltype(m)>;
    if constexpr (!std::is_same_v<MechanismValueT<M>, Value> || IsMemoized<M>::value) {
      return Status::kInvalidArgument;
    } else {
      out->bit_count = 0;
      return randomize_payload(m, rng, value, out);
    }
  });
}
}  // namespace

Status randomize(const DeviceMechanism& mechanism, Rng& rng, uint32_t value, ReportPayload* out) {
  return randomize_value(mechanism, rng, value, out);
}

Status randomize_word(const DeviceMechanism& mechanism, Rng& rng, const Word& word,
                      ReportPayload* out) {
  return randomize_value(mechanism, rng, word, out);
}

collector::IncomingReport as_incoming(const ReportPayload& payload,
                                      const collector::MetricConfig& metric) {
  collector::IncomingReport report;
  report.metric_id = metric.id;
  report.mechanism = static_cast<uint32_t>(metric.mechanism);
  report.domain_size = metric.domain_size;
  report.longitudinal_epsilon_micros = metric.longitudinal_epsilon_micros;
  report.value = payload.value;
  report.has_payload = true;
  report.payload = mechanism_payload(metric.mechanism);
  switch (report.payload) {
    case PayloadKind::kBit:
    case PayloadKind::kIndex:
      break;
    case PayloadKind::kBits:
      report.bits.assign(reinterpret_cast<const char*>(payload.bits),
                         (payload.bit_count + 7u) / 8u);
      break;
    case PayloadKind::kNumber:
      report.number = payload.number;
      break;
    case PayloadKind::kBloom:
      report.value = payload.seed;  // the cohort
      report.bits.assign(reinterpret_cast<const char*>(payload.bits),
                         (payload.bit_count + 7u) / 8u);
      break;
    case PayloadKind::kLocalHash:
      report.hash_a = payload.seed >> 16;
      report.hash_b = payload.seed & 0xFFFFu;
      break;
  }
  return report;
}

uint64_t device_seed(uint64_t fleet_seed, uint64_t index) {
  uint64_t z = fleet_seed * 0x9E3779B97F4A7C15ull + index + 1;  // SplitMix64 finalizer
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

SimulatedDevice::SimulatedDevice(uint64_t seed, uint32_t flash_blocks)
    : flash_(std::make_unique<uint8_t[]>(size_t{flash_blocks} * SimPort::kBlockSize)),
      port_(seed, flash_.get(), flash_blocks) {
  client_.emplace();
}

Status SimulatedDevice::boot(uint64_t budget_micros, const collector::MetricConfig& metric) {
  return boot(budget_micros, std::vector<collector::MetricConfig>{metric});
}

Status SimulatedDevice::boot(uint64_t budget_micros,
                             const std::vector<collector::MetricConfig>& metrics) {
  const Status opened = client_->open(port_.port());
  if (opened == Status::kOk) return Status::kInvalidArgument;  // the flash was not blank
  if (opened != Status::kNotProvisioned) return opened;
  BLUR_TRY(client_->provision(LedgerPolicy{budget_micros}));
  return add_metrics(metrics);
}

Status SimulatedDevice::restart(const std::vector<collector::MetricConfig>& metrics) {
  client_.emplace();
  BLUR_TRY(client_->open(port_.port()));
  return add_metrics(metrics);
}

Status SimulatedDevice::add_metrics(const std::vector<collector::MetricConfig>& metrics) {
  for (const collector::MetricConfig& metric : metrics) {
    // The client builds rappor with the default shape and hash key 0 only.
    if (metric.mechanism == MechanismId::kRappor &&
        (metric.hash_key != 0 || metric.rappor.bloom_bits != RapporShape{}.bloom_bits ||
         metric.rappor.hash_count != RapporShape{}.hash_count ||
         metric.rappor.cohort_count != RapporShape{}.cohort_count)) {
      return Status::kInvalidArgument;
    }
    // A memoized onebit rounds to points on its grid: every grid point by default.
    const bool memoized_mean =
        metric.mechanism == MechanismId::kOneBitMean && metric.longitudinal_epsilon_micros != 0;
    BLUR_TRY(client_->add_metric(metric.id, static_cast<MechanismId>(metric.mechanism),
                                 metric.epsilon_micros, metric.domain_size,
                                 metric.longitudinal_epsilon_micros,
                                 memoized_mean ? metric.domain_size - 1 : 0));
  }
  return Status::kOk;
}

Status SimulatedDevice::pending_batch(std::string* batch, size_t* count,
                                      uint64_t* ack_token) const {
  // Room for the largest batch; one buffer per thread, not per device.
  thread_local std::vector<uint8_t> buffer(kBatchHeaderSize +
                                           kMaxReportsPerBatch * kMaxEncodedReportSize);
  size_t written = 0;
  BLUR_TRY(client_->pending_batch(buffer.data(), buffer.size(), &written, count, ack_token));
  batch->assign(reinterpret_cast<const char*>(buffer.data()), written);
  return Status::kOk;
}

uint32_t flash_blocks_for(const collector::MetricConfig& metric, uint32_t reports) {
  // The queue's own bound for one report (Client::record's has_room), as an entry.
  size_t bound = kMaxEncodedScalarReportSize;
  const PayloadKind shape = mechanism_payload(metric.mechanism);
  if (shape == PayloadKind::kBits || shape == PayloadKind::kBloom) {
    const uint32_t bits = shape == PayloadKind::kBloom ? metric.rappor.bloom_bits : metric.domain_size;
    bound += 12 + (bits + 7) / 8;
  }
  const size_t per_segment = ReportQueue::reports_per_segment(
      SimPort::kBlockSize, 1, static_cast<uint32_t>(bound));
  if (per_segment == 0) return 0;
  const size_t segments = (reports + per_segment - 1) / per_segment + 1;  // + a spare
  const size_t blocks = kLedgerBlocks + 2 + segments;
  return blocks > kLedgerBlocks + ReportQueue::kMaxBlocks
             ? 0
             : std::max<uint32_t>(SimPort::kBlockCount, static_cast<uint32_t>(blocks));
}

}  // namespace blur::sim
