#include "estimate/metric_estimate.h"

#include "estimate/frequency_oracle.h"

namespace blur::collector {

nlohmann::json estimate_metric(const MetricConfig& metric, const SqliteStore& store) {
  nlohmann::json out;
  out["metric_id"] = metric.id;
  out["mechanism"] = mechanism_name(metric.mechanism);
  out["epsilon"] = metric.epsilon_micros / 1e6;
  out["estimates"] = nlohmann::json::array();
  switch (metric.mechanism) {
    case Mechanism::kBinaryRandomizedResponse: {
      const auto counts = store.binary_counts(metric.id);
      out["n"] = counts.reports;
      if (counts.reports == 0) break;
      const OracleParams params = binary_rr_params(metric.epsilon_micros);
      const double n = static_cast<double>(counts.reports);
      const uint64_t support[2] = {counts.reports - counts.ones, counts.ones};
      for (uint32_t value = 0; value < 2; ++value) {
        const CountEstimate e = estimate_count(counts.reports, support[value], params);
        out["estimates"].push_back({{"value", value},
                                    {"estimate", e.count},
                                    {"stderr", e.std_error},
                                    {"ci95", {e.ci95_low, e.ci95_high}},
                                    {"fraction", e.count / n},
                                    {"fraction_ci95", {e.ci95_low / n, e.ci95_high / n}}});
      }
      break;
    }
  }
  return out;
}

}  // namespace blur::collector
