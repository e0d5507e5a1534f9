// One simulated device through a history of values: the real blur::Client
// (its ledger on the simulated flash, its DRBG, its memoized streams)
// records each value in order, and what it sent is read back off the wire.
// The raw material of privacy audits (audit.h) and of `blur-device-sim
// history`, which writes it for anyone's own attack.
#ifndef BLUR_TOOLS_DEVICE_SIM_HISTORY_H
#define BLUR_TOOLS_DEVICE_SIM_HISTORY_H

#include <cstdint>
#include <string>
#include <vector>

#include "blur/status.h"
#include "model/incoming_report.h"
#include "config/metric_rules.h"
#include "options.h"

namespace blur::sim {

struct DeviceHistory {
  std::vector<Status> statuses;        // record()'s answer, per value
  std::vector<uint64_t> spent_micros;  // the ledger's spent epsilon after each value
  // The reports it queued, decoded from the encoded batch as the collector
  // would (a refused value has none).
  std::vector<collector::IncomingReport> reports;
};

// Values as text: an index (0..domain-1) for index metrics, a word for
// word-discovery metrics (pem, sfp; recorded as the device takes any text).
// At most 64 values (one batch). kInvalidArgument for a value that is no
// index of the domain.
Status run_history(const collector::MetricConfig& metric, const std::vector<std::string>& values,
                   uint64_t device_seed, uint64_t budget_micros, DeviceHistory* out);

// One JSON line: {"device", "spent_micros": [...], "statuses": [...],
// "reports": [{mechanism, epsilon_micros, longitudinal_epsilon_micros,
// domain_size, and the payload field as on the wire}]}.
std::string history_json_line(uint64_t device, const DeviceHistory& history);

// `blur-device-sim history`: o.devices fresh devices (seeds from o.seed),
// each recording `values` under `metric_spec`; JSON lines to `out_path`
// ("-": standard output).
int history(const Options& o, const std::string& metric_spec, const std::string& values,
            const std::string& out_path);

}  // namespace blur::sim

#endif  // BLUR_TOOLS_DEVICE_SIM_HISTORY_H
