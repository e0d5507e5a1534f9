// One simulated device's life, shared by the fleet and discover commands:
// first boot, its records, and sending its queue until acknowledged, to a
// collector over HTTP or to the collector's decode -> validate -> count
// path in process (offline_delivery).
#ifndef BLUR_TOOLS_DEVICE_SIM_DEVICE_LIFE_H
#define BLUR_TOOLS_DEVICE_SIM_DEVICE_LIFE_H

#include <cstdint>
#include <functional>
#include <string>

#include "aggregate/aggregate.h"
#include "config/metric_rules.h"
#include "options.h"
#include "simulated_device.h"

namespace blur::sim {

// What became of one batch.
struct Delivery {
  enum class Kind { kStored, kRefused, kUnreachable };
  Kind kind = Kind::kUnreachable;
  uint64_t accepted = 0;
  uint64_t duplicates = 0;
  uint64_t over_limit = 0;  // refused for good by the contribution bound
  uint64_t resent = 0;      // attempts after the first
  std::string error;
};
using Deliver =
    std::function<Delivery(uint64_t device_nonce, const std::string& batch, size_t count)>;

struct DeviceOutcome {
  uint64_t acknowledged = 0;  // reports
  uint64_t accepted = 0;
  uint64_t duplicates = 0;
  uint64_t over_limit = 0;
  uint64_t resent = 0;   // batch attempts after the first
  uint32_t pending = 0;  // reports left in the device's queue
  bool unreachable = false;
  std::string error;  // empty: every report acknowledged
};

// One record on a device: its value, or its word.
using Recorder = std::function<Status(SimulatedDevice& device)>;
Recorder record_value(const collector::MetricConfig& metric, uint32_t value);
Recorder record_word(const collector::MetricConfig& metric, const std::string& word);

// The collector's own path in process: decode, validate against `metric`,
// add to `aggregate` (which the caller owns and serializes access to).
Deliver offline_delivery(const collector::MetricConfig& metric, collector::Aggregate* aggregate);

// Sends the device's pending reports, batch by batch, acknowledging each
// batch only after the collector stored all of it.
bool send_pending(SimulatedDevice& device, const Deliver& deliver, DeviceOutcome* out);

// One device's life: first boot, o.reports records (sending what is
// pending whenever the queue is full), then sending until nothing is
// pending.
DeviceOutcome live(const Options& o, uint64_t index, const collector::MetricConfig& metric,
                   uint64_t budget_micros, const Recorder& record, const Deliver& deliver);

}  // namespace blur::sim

#endif  // BLUR_TOOLS_DEVICE_SIM_DEVICE_LIFE_H
