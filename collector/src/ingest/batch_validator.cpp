#include "ingest/batch_validator.h"

#include <unordered_set>

#include "mechanisms/mechanism_spec.h"

namespace blur::collector {

std::string validate_batch(const Batch& batch, const MetricLookup& lookup, bool* unknown_metric) {
  if (unknown_metric != nullptr) *unknown_metric = false;
  if (batch.reports.empty()) return "batch has no reports";
  std::unordered_set<uint64_t> ids;
  for (size_t i = 0; i < batch.reports.size(); ++i) {
    const IncomingReport& r = batch.reports[i];
    const std::string where =
        "report " + std::to_string(i) + " (id " + std::to_string(r.report_id) + "): ";
    if (!ids.insert(r.report_id).second) return where + "report id repeats within the batch";
    const auto metric = lookup(r.metric_id);
    if (!metric) {
      if (unknown_metric != nullptr) *unknown_metric = true;
      return where + "unknown metric " + std::to_string(r.metric_id);
    }
    if (r.mechanism != static_cast<uint32_t>(metric->mechanism)) {
      return where + "mechanism " + std::to_string(r.mechanism) + " does not match " +
             describe(*metric);
    }
    if (r.epsilon_micros != metric->epsilon_micros) {
      return where + "epsilon_micros " + std::to_string(r.epsilon_micros) + " does not match " +
             describe(*metric);
    }
    if (r.domain_size != metric->domain_size) {
      return where + "domain_size " + std::to_string(r.domain_size) + " does not match " +
             describe(*metric);
    }
    if (r.longitudinal_epsilon_micros != metric->longitudinal_epsilon_micros) {
      return where + "longitudinal_epsilon_micros " +
             std::to_string(r.longitudinal_epsilon_micros) + " does not match " +
             describe(*metric);
    }
    if (std::string error = payload_shape_error(*metric, r); !error.empty()) return where + error;
  }
  return {};
}

}  // namespace blur::collector
