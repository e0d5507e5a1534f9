#include "simulated_device.h"

#include <algorithm>
#include <vector>

#include "blur/report/report_encoding.h"

namespace blur::sim {

Result<DeviceMechanism> device_mechanism(const collector::MetricConfig& metric) {
  switch (metric.mechanism) {
    case collector::MechanismId::kBinaryRandomizedResponse: {
      const auto rr = BinaryRandomizedResponse::create(metric.epsilon_micros);
      if (!rr.ok()) return rr.status();
      return DeviceMechanism(rr.value());
    }
    case collector::MechanismId::kGeneralizedRandomizedResponse: {
      const auto grr =
          GeneralizedRandomizedResponse::create(metric.epsilon_micros, metric.domain_size);
      if (!grr.ok()) return grr.status();
      return DeviceMechanism(grr.value());
    }
    case collector::MechanismId::kSymmetricUnaryEncoding:
    case collector::MechanismId::kOptimizedUnaryEncoding: {
      const auto kind = metric.mechanism == collector::MechanismId::kSymmetricUnaryEncoding
                            ? UnaryEncoding::Kind::kSymmetric
                            : UnaryEncoding::Kind::kOptimized;
      const auto ue = UnaryEncoding::create(kind, metric.epsilon_micros, metric.domain_size);
      if (!ue.ok()) return ue.status();
      return DeviceMechanism(ue.value());
    }
    case collector::MechanismId::kDiscreteLaplace: {
      const auto laplace = DiscreteLaplace::create(metric.epsilon_micros, metric.domain_size);
      if (!laplace.ok()) return laplace.status();
      return DeviceMechanism(laplace.value());
    }
    case collector::MechanismId::kHadamardResponse: {
      const auto hr = HadamardResponse::create(metric.epsilon_micros, metric.domain_size);
      if (!hr.ok()) return hr.status();
      return DeviceMechanism(hr.value());
    }
    case collector::MechanismId::kOptimizedLocalHashing:
    case collector::MechanismId::kBinaryLocalHashing: {
      const auto kind = metric.mechanism == collector::MechanismId::kBinaryLocalHashing
                            ? LocalHashing::Kind::kBinary
                            : LocalHashing::Kind::kOptimized;
      const auto lh = LocalHashing::create(kind, metric.epsilon_micros, metric.domain_size);
      if (!lh.ok()) return lh.status();
      return DeviceMechanism(lh.value());
    }
    case collector::MechanismId::kRappor: {
      const auto rappor = Rappor::create(metric.epsilon_micros, metric.domain_size, metric.rappor,
                                         BloomHashKey{metric.id, metric.hash_key});
      if (!rappor.ok()) return rappor.status();
      return DeviceMechanism(rappor.value());
    }
    case collector::MechanismId::kPrefixExtension: {
      const auto pem = PrefixExtension::create(metric.epsilon_micros, metric.domain_size);
      if (!pem.ok()) return pem.status();
      return DeviceMechanism(pem.value());
    }
    case collector::MechanismId::kSequenceFragmentPuzzle: {
      const auto sfp = SequenceFragmentPuzzle::create(metric.epsilon_micros, metric.domain_size);
      if (!sfp.ok()) return sfp.status();
      return DeviceMechanism(sfp.value());
    }
    case collector::MechanismId::kLoloha:
      return Status::kInvalidArgument;  // memoized: needs a device (SimulatedDevice)
    case collector::MechanismId::kOneBitMean: {
      const auto onebit = OneBitMean::create(metric.epsilon_micros, metric.domain_size);
      if (!onebit.ok()) return onebit.status();
      return DeviceMechanism(onebit.value());
    }
  }
  return Status::kInvalidArgument;
}

EpsilonMicros epsilon_charged(const DeviceMechanism& mechanism) {
  return std::visit([](const auto& m) { return m.epsilon_charged(); }, mechanism);
}

Status randomize(const DeviceMechanism& mechanism, Rng& rng, uint32_t value, ReportPayload* out) {
  return std::visit(
      [&](const auto& m) {
        using M = std::decay_t<decltype(m)>;
        constexpr PayloadKind kind = M::kPayload;
        if constexpr (!std::is_same_v<MechanismValueT<M>, uint32_t>) {
          return Status::kInvalidArgument;
        } else if constexpr (kind == PayloadKind::kBits) {
          out->bit_count = static_cast<uint16_t>(m.domain_size());
          return m.randomize(rng, value, out->bits);
        } else if constexpr (kind == PayloadKind::kBloom) {
          out->bit_count = static_cast<uint16_t>(m.shape().bloom_bits);
          return m.randomize(rng, value, &out->seed, out->bits);
        } else if constexpr (kind == PayloadKind::kLocalHash) {
          out->bit_count = 0;
          return m.randomize(rng, value, &out->seed, &out->value);
        } else if constexpr (kind == PayloadKind::kNumber) {
          out->bit_count = 0;
          return m.randomize(rng, value, &out->number);
        } else {
          out->bit_count = 0;
          return m.randomize(rng, value, &out->value);
        }
      },
      mechanism);
}

Status randomize_word(const DeviceMechanism& mechanism, Rng& rng, const Word& word,
                      ReportPayload* out) {
  return std::visit(
      [&](const auto& m) {
        if constexpr (std::is_same_v<MechanismValueT<std::decay_t<decltype(m)>>, Word>) {
          out->bit_count = 0;
          return m.randomize(rng, word, &out->seed, &out->value);
        } else {
          return Status::kInvalidArgument;
        }
      },
      mechanism);
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
      port_(seed, flash_.get(), flash_blocks) {}

Status SimulatedDevice::boot(uint64_t budget_micros, const collector::MetricConfig& metric) {
  // The client builds rappor with the default shape and hash key 0 only.
  if (metric.mechanism == MechanismId::kRappor &&
      (metric.hash_key != 0 || metric.rappor.bloom_bits != RapporShape{}.bloom_bits ||
       metric.rappor.hash_count != RapporShape{}.hash_count ||
       metric.rappor.cohort_count != RapporShape{}.cohort_count)) {
    return Status::kInvalidArgument;
  }
  const Status opened = client_.open(port_.port());
  if (opened == Status::kOk) return Status::kInvalidArgument;  // the flash was not blank
  if (opened != Status::kNotProvisioned) return opened;
  BLUR_TRY(client_.provision(LedgerPolicy{budget_micros}));
  // A memoized onebit rounds to points on its grid: every grid point by default.
  const bool memoized_mean =
      metric.mechanism == MechanismId::kOneBitMean && metric.longitudinal_epsilon_micros != 0;
  return client_.add_metric(metric.id, static_cast<MechanismId>(metric.mechanism),
                            metric.epsilon_micros, metric.domain_size,
                            metric.longitudinal_epsilon_micros,
                            memoized_mean ? metric.domain_size - 1 : 0);
}

Status SimulatedDevice::pending_batch(std::string* batch, size_t* count,
                                      uint64_t* ack_token) const {
  // Room for the largest batch; one buffer per thread, not per device.
  thread_local std::vector<uint8_t> buffer(kBatchHeaderSize +
                                           kMaxReportsPerBatch * kMaxEncodedReportSize);
  size_t written = 0;
  BLUR_TRY(client_.pending_batch(buffer.data(), buffer.size(), &written, count, ack_token));
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
