// A simulated device: the real SDK (CTR_DRBG, persisted ledger, exact
// mechanisms, nanopb encoding) on the sim port (seeded entropy, RAM flash).
#ifndef BLUR_TOOLS_DEVICE_SIM_SIMULATED_DEVICE_H
#define BLUR_TOOLS_DEVICE_SIM_SIMULATED_DEVICE_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "blur/client.h"
#include "blur/mechanisms/any_mechanism.h"
#include "blur/report/report.h"
#include "blur/sampling/rng.h"
#include "blur/storage/ledger.h"
#include "config/metric_rules.h"
#include "model/incoming_report.h"
#include "sim_port.h"

namespace blur::sim {

// The device-side mechanism for a metric configuration (its one-shot form),
// built by the SDK's own dispatch (any_mechanism.h).
using DeviceMechanism = AnyMechanism;
Result<DeviceMechanism> device_mechanism(const collector::MetricConfig& metric);
EpsilonMicros epsilon_charged(const DeviceMechanism& mechanism);
// One randomization, without a ledger (for measuring the randomizer):
// `value` for an index mechanism, `word` for a discovery one (the other
// kind answers kInvalidArgument).
Status randomize(const DeviceMechanism& mechanism, Rng& rng, uint32_t value, ReportPayload* out);
Status randomize_word(const DeviceMechanism& mechanism, Rng& rng, const Word& word,
                      ReportPayload* out);
// A payload as the collector's decoder would deliver it for `metric`.
collector::IncomingReport as_incoming(const ReportPayload& payload,
                                      const collector::MetricConfig& metric);

// Device i of a fleet seeded with `fleet_seed`: distinct, reproducible.
uint64_t device_seed(uint64_t fleet_seed, uint64_t index);

// A simulated device: a blur::Client (its own DRBG, ledger and report
// queue) on the sim port. Neither copied nor moved: the client keeps a
// pointer to the port.
class SimulatedDevice {
 public:
  // flash_blocks > SimPort::kBlockCount: a longer report queue (64-report
  // batches do not fit the default 4 blocks).
  explicit SimulatedDevice(uint64_t seed, uint32_t flash_blocks = SimPort::kBlockCount);
  SimulatedDevice(const SimulatedDevice&) = delete;
  SimulatedDevice& operator=(const SimulatedDevice&) = delete;

  // First boot: opens the client on blank flash, provisions a lifetime
  // budget and adds `metric` (memoized with its longitudinal epsilon; a
  // memoized onebit rounds to every grid point).
  Status boot(uint64_t budget_micros, const collector::MetricConfig& metric);
  // The same with several metrics (at most kMaxClientMetrics).
  Status boot(uint64_t budget_micros, const std::vector<collector::MetricConfig>& metrics);
  // A restart with another set of metrics (at most kMaxClientMetrics), as
  // after an app update: the flash (ledger, pending reports, the report id
  // sequence) is kept, so a batch can hold more metrics than one Client
  // configures.
  Status restart(const std::vector<collector::MetricConfig>& metrics);
  Status record(uint32_t metric_id, uint32_t value) { return client_->record(metric_id, value); }
  Status record_word(uint32_t metric_id, const std::string& word) {
    return client_->record_word(metric_id, word.data(), word.size());
  }
  // The oldest pending reports as an encoded blur.ReportBatch; *count = 0
  // when nothing is pending. Acknowledge `*ack_token` after the collector's 200.
  Status pending_batch(std::string* batch, size_t* count, uint64_t* ack_token) const;
  Status acknowledge(uint64_t ack_token) { return client_->acknowledge(ack_token); }
  uint32_t pending() const { return client_->queue().pending_count(); }
  uint64_t device_nonce() const { return client_->ledger().device_nonce(); }
  uint64_t spent_micros() const { return client_->ledger().spent_micros(); }
  // The device's clock (Unix seconds): its reports' observed minute.
  void set_clock(uint64_t seconds) { port_.set_time(seconds); }

 private:
  Status add_metrics(const std::vector<collector::MetricConfig>& metrics);

  std::unique_ptr<uint8_t[]> flash_;
  SimPort port_;
  std::optional<Client> client_;  // re-made by restart()
};

// Flash blocks a SimulatedDevice needs to hold `reports` pending reports of
// `metric` (ledger, acknowledgement log, segments and a spare); 0 if one
// report does not fit a segment.
uint32_t flash_blocks_for(const collector::MetricConfig& metric, uint32_t reports);

}  // namespace blur::sim

#endif  // BLUR_TOOLS_DEVICE_SIM_SIMULATED_DEVICE_H
