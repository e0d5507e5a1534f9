#include "estimate/metric_estimate.h"

#include <algorithm>

#include "estimate/frequency_oracle.h"
#include "estimate/numeric_summary.h"
#include "registry/mechanism_spec.h"

namespace blur::collector {

nlohmann::json estimate_json(const Aggregate& aggregate, PostProcessing post) {
  const MetricConfig& metric = aggregate.metric();
  if (aggregate.numeric()) return numeric_estimate_json(metric, aggregate.summary(), post);
  nlohmann::json out;
  out["metric_id"] = metric.id;
  out["mechanism"] = blur::mechanism_name(metric.mechanism);
  out["epsilon"] = metric.epsilon_micros / 1e6;
  out["domain_size"] = metric.domain_size;
  out["n"] = aggregate.reports();
  out["estimates"] = nlohmann::json::array();
  if (aggregate.reports() == 0) return out;
  const OracleParams params = oracle_params(metric);
  const uint64_t reports = aggregate.reports();
  const double n = static_cast<double>(reports);
  const std::vector<uint64_t> counts = aggregate.support_counts();
  // Shared-collision variance (RAPPOR): needs every value's plug-in count.
  std::vector<double> squared(metric.domain_size, 0.0);
  double all_squared = 0;
  if (params.collision_coefficient != 0) {
    for (uint32_t value = 0; value < metric.domain_size; ++value) {
      const double c =
          std::clamp(estimate_count(reports, counts[value], params).count, 0.0, n);
      squared[value] = c * c;
      all_squared += c * c;
    }
  }
  std::vector<double> unbiased;
  for (uint32_t value = 0; value < metric.domain_size; ++value) {
    const CountEstimate e =
        estimate_count(reports, counts[value], params, all_squared - squared[value]);
    unbiased.push_back(e.count);
    out["estimates"].push_back({{"value", value},
                                {"estimate", e.count},
                                {"stderr", e.std_error},
                                {"ci95", {e.ci95_low, e.ci95_high}},
                                {"fraction", e.count / n},
                                {"fraction_ci95", {e.ci95_low / n, e.ci95_high / n}}});
  }
  if (post == PostProcessing::kNormSub) add_norm_sub(unbiased, n, &out["estimates"], &out);
  return out;
}

}  // namespace blur::collector
