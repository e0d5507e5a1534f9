#include "api/numeric_estimate_json.h"

#include <vector>

namespace blur::collector {

namespace {

// Adds "estimate_normsub" to each of `estimates` (objects in the order of
// `unbiased`) and "postprocessing": "norm-sub" to `object`.
void add_norm_sub(const std::vector<double>& unbiased, double total, nlohmann::json* estimates,
                  nlohmann::json* object) {
  const std::vector<double> consistent = norm_sub(unbiased, total);
  for (size_t v = 0; v < consistent.size() && v < estimates->size(); ++v) {
    (*estimates)[v]["estimate_normsub"] = consistent[v];
  }
  (*object)["postprocessing"] = "norm-sub";
}

}  // namespace

nlohmann::json numeric_estimate_json(const MetricConfig& metric, const NumericSummary& summary,
                                     const DeviceClustering& clustering, PostProcessing post) {
  const NumericEstimate estimate = estimate_numeric(metric, summary, clustering);
  nlohmann::json out;
  out["metric_id"] = metric.id;
  out["mechanism"] = mechanism_name(metric.mechanism);
  out["epsilon"] = metric.epsilon_micros / 1e6;
  if (metric.longitudinal_epsilon_micros != 0) {
    out["longitudinal_epsilon"] = metric.longitudinal_epsilon_micros / 1e6;
  }
  out["domain_size"] = metric.domain_size;
  out["grid_step"] = 1;
  out["n"] = estimate.reports;
  out["estimates"] = nlohmann::json::array();
  if (estimate.noise_variance) out["noise_variance"] = *estimate.noise_variance;
  if (!estimate.mean) return out;
  const CountEstimate& mean = *estimate.mean;
  out["estimates"].push_back({{"value", "mean"},
                              {"estimate", mean.count},
                              {"stderr", mean.std_error},
                              {"ci95", {mean.ci95_low, mean.ci95_high}}});
  if (estimate.histogram.empty()) return out;
  std::vector<double> unbiased;
  nlohmann::json bins = nlohmann::json::array();
  for (uint32_t x = 0; x < estimate.histogram.size(); ++x) {
    const CountEstimate& e = estimate.histogram[x];
    unbiased.push_back(e.count);
    bins.push_back({{"value", x},
                    {"estimate", e.count},
                    {"stderr", e.std_error},
                    {"ci95", {e.ci95_low, e.ci95_high}}});
  }
  if (post == PostProcessing::kNormSub) {
    add_norm_sub(unbiased, static_cast<double>(estimate.reports), &bins, &out);
  }
  out["histogram"] = std::move(bins);
  return out;
}

nlohmann::json numeric_estimate_json(const MetricConfig& metric, const NumericSummary& summary,
                                     PostProcessing post) {
  return numeric_estimate_json(
      metric, summary, DeviceClustering::one_report_per_device(summary.reports()), post);
}

}  // namespace blur::collector
