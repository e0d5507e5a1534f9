#include "device_life.h"

#include <ctime>

#include "ingest/batch_decoder.h"
#include "ingest/batch_validator.h"

namespace blur::sim {

using collector::MetricConfig;

Recorder record_value(const MetricConfig& metric, uint32_t value) {
  return [id = metric.id, value](SimulatedDevice& device) { return device.record(id, value); };
}

Recorder record_word(const MetricConfig& metric, const std::string& word) {
  return [id = metric.id, &word](SimulatedDevice& device) { return device.record_word(id, word); };
}

Deliver offline_delivery(const MetricConfig& metric, collector::Aggregate* aggregate) {
  return [metric, aggregate](uint64_t, const std::string& batch, size_t count) {
    Delivery delivery;
    delivery.kind = Delivery::Kind::kRefused;
    collector::Batch decoded;
    if (!collector::decode_batch(reinterpret_cast<const uint8_t*>(batch.data()), batch.size(),
                                 &decoded, &delivery.error)) {
      return delivery;
    }
    delivery.error =
        collector::validate_batch(decoded, [&](uint32_t id) -> std::optional<MetricConfig> {
          return id == metric.id ? std::optional<MetricConfig>(metric) : std::nullopt;
        });
    if (!delivery.error.empty()) return delivery;
    for (const auto& r : decoded.reports) aggregate->add(r);
    delivery.kind = Delivery::Kind::kStored;
    delivery.accepted = count;
    return delivery;
  };
}

bool send_pending(SimulatedDevice& device, const Deliver& deliver, DeviceOutcome* out) {
  std::string batch;
  for (;;) {
    size_t count = 0;
    uint64_t token = 0;
    Status status = device.pending_batch(&batch, &count, &token);
    if (status != Status::kOk) {
      out->error = std::string("pending_batch: ") + status_name(status);
      return false;
    }
    if (count == 0) return true;
    const Delivery delivery = deliver(device.device_nonce(), batch, count);
    out->resent += delivery.resent;
    if (delivery.kind != Delivery::Kind::kStored) {
      out->unreachable = delivery.kind == Delivery::Kind::kUnreachable;
      out->error = delivery.error;
      return false;
    }
    if (delivery.accepted + delivery.duplicates + delivery.over_limit != count) {
      out->error = "collector answered 200 for " + std::to_string(count) + " reports but counted " +
                   std::to_string(delivery.accepted) + " new and " +
                   std::to_string(delivery.duplicates) + " already stored";
      if (delivery.over_limit != 0) {
        out->error += " and " + std::to_string(delivery.over_limit) + " over the limit";
      }
      return false;
    }
    status = device.acknowledge(token);
    if (status != Status::kOk) {
      out->error = std::string("acknowledge: ") + status_name(status);
      return false;
    }
    out->acknowledged += count;
    out->accepted += delivery.accepted;
    out->duplicates += delivery.duplicates;
    out->over_limit += delivery.over_limit;
  }
}

DeviceOutcome live(const Options& o, uint64_t index, const MetricConfig& metric,
                   uint64_t budget_micros, const Recorder& record, const Deliver& deliver) {
  const uint64_t fleet_seed = o.seed;
  const uint32_t reports = o.reports;
  DeviceOutcome out;
  SimulatedDevice device(device_seed(fleet_seed, index));
  if (o.spread_hours != 0) {
    // Device i's clock i hours (mod the spread) behind now, a minute into
    // the hour: its reports fall in that hour's buckets.
    const auto now = static_cast<uint64_t>(std::time(nullptr));
    device.set_clock(now - now % 3600 - (index % o.spread_hours) * 3600 + 60);
  }
  auto failed = [&](const char* step, Status status) {
    out.error = std::string(step) + ": " + status_name(status);
    out.pending = device.pending();
    return out;
  };
  Status status = device.boot(budget_micros, metric);
  if (status != Status::kOk) return failed("boot", status);
  for (uint32_t r = 0; r < reports; ++r) {
    status = record(device);
    if (status == Status::kQueueFull) {
      if (!send_pending(device, deliver, &out)) break;
      status = record(device);
    }
    if (status != Status::kOk) return failed("record", status);
  }
  if (out.error.empty()) send_pending(device, deliver, &out);
  out.pending = device.pending();
  if (out.error.empty() && out.pending != 0) out.error = "reports still pending";
  return out;
}

}  // namespace blur::sim
