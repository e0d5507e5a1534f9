#include "simulated_device.h"

#include "blur/report_encoding.h"

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
        constexpr PayloadKind kind = std::decay_t<decltype(m)>::kPayload;
        if constexpr (kind == PayloadKind::kBits) {
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

collector::IncomingReport as_incoming(const ReportPayload& payload,
                                      const collector::MetricConfig& metric) {
  collector::IncomingReport report;
  report.metric_id = metric.id;
  report.mechanism = static_cast<uint32_t>(metric.mechanism);
  report.domain_size = metric.domain_size;
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

Status SimulatedDevice::boot(const std::string& name, uint64_t budget_micros) {
  BLUR_TRY(rng_.seed(port_.port(), reinterpret_cast<const uint8_t*>(name.data()), name.size()));
  uint64_t nonce = 0;
  BLUR_TRY(rng_.next_u64(&nonce));
  return ledger_.provision(port_.port(), LedgerPolicy{budget_micros}, nonce);
}

Status SimulatedDevice::report_batch(const DeviceMechanism& mechanism, uint32_t metric_id,
                                     uint32_t value, std::string* batch) {
  Report report{};
  BLUR_TRY(std::visit(
      [&](const auto& m) { return make_report(ledger_, rng_, m, metric_id, value, &report); },
      mechanism));
  uint8_t buffer[kBatchHeaderSize + kMaxEncodedReportSize];
  size_t written = 0;
  BLUR_TRY(encode_batch(ledger_.device_nonce(), &report, 1, buffer, sizeof buffer, &written));
  batch->assign(reinterpret_cast<const char*>(buffer), written);
  return Status::kOk;
}

}  // namespace blur::sim
