#include "estimate/metric_estimate.h"

#include "estimate/frequency_oracle.h"

namespace blur::collector {

nlohmann::json estimate_metric(const MetricConfig& metric, const SqliteStore& store) {
  nlohmann::json out;
  out["metric_id"] = metric.id;
  out["mechanism"] = mechanism_name(metric.mechanism);
  out["epsilon"] = metric.epsilon_micros / 1e6;
  out["domain_size"] = metric.domain_size;
  out["estimates"] = nlohmann::json::array();
  // Randomized response (binary and k-ary): a report supports its value.
  const std::vector<uint64_t> support = store.support_counts(metric.id, metric.domain_size);
  uint64_t reports = 0;
  for (uint64_t count : support) reports += count;
  out["n"] = reports;
  if (reports == 0) return out;
  const OracleParams params = randomized_response_params(metric.epsilon_micros, metric.domain_size);
  const double n = static_cast<double>(reports);
  for (uint32_t value = 0; value < metric.domain_size; ++value) {
    const CountEstimate e = estimate_count(reports, support[value], params);
    out["estimates"].push_back({{"value", value},
                                {"estimate", e.count},
                                {"stderr", e.std_error},
                                {"ci95", {e.ci95_low, e.ci95_high}},
                                {"fraction", e.count / n},
                                {"fraction_ci95", {e.ci95_low / n, e.ci95_high / n}}});
  }
  return out;
}

}  // namespace blur::collector
