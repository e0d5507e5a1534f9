#include "estimate/numeric_estimate.h"

#include <algorithm>
#include <cmath>

#include "estimate/frequency_oracle.h"
#include "estimate/grid_histogram.h"
#include "mechanisms/mechanism_spec.h"

namespace blur::collector {

nlohmann::json numeric_estimate_json(const MetricConfig& metric, const NumericSummary& summary,
                                     const DeviceClustering& clustering, PostProcessing post) {
  nlohmann::json out;
  out["metric_id"] = metric.id;
  out["mechanism"] = mechanism_name(metric.mechanism);
  out["epsilon"] = metric.epsilon_micros / 1e6;
  if (metric.longitudinal_epsilon_micros != 0) {
    out["longitudinal_epsilon"] = metric.longitudinal_epsilon_micros / 1e6;
  }
  out["domain_size"] = metric.domain_size;
  out["grid_step"] = 1;
  out["n"] = summary.reports();
  out["estimates"] = nlohmann::json::array();
  // Both estimators are affine in the reports: mean = offset + scale * report_mean.
  const NumericMean model = mechanism_spec(metric.mechanism).numeric_mean(metric);
  if (model.exact_noise) out["noise_variance"] = model.noise_variance;
  if (summary.reports() == 0) return out;
  const double mean = model.offset + model.scale * summary.mean();
  // Discrete Laplace: the error of the mean is the mean of the noise, whose
  // variance is known exactly (conditional on the devices' values, as for
  // the frequency oracles). 1BitMean: the bits' sample variance, which
  // bounds the conditional variance sum p_i (1 - p_i) / n^2 from above.
  // Both as the variance of the sum of the n reports, then clustered.
  const double n = static_cast<double>(summary.reports());
  const double floor = model.variance_floor, ceiling = model.variance_ceiling;
  const double independent =
      model.exact_noise ? n * model.noise_variance : n * summary.sample_variance();
  const double scale = model.scale;
  const double stderr_mean =
      scale * std::sqrt(std::max(clustering.variance(independent, floor, ceiling), 0.0)) / n;
  out["estimates"].push_back({{"value", "mean"},
                              {"estimate", mean},
                              {"stderr", stderr_mean},
                              {"ci95", {mean - kZ95 * stderr_mean, mean + kZ95 * stderr_mean}}});
  if (model.grid_histogram_r > 0 && metric.domain_size <= kMaxHistogramGrid) {
    const std::map<int64_t, double> outputs(summary.histogram().begin(), summary.histogram().end());
    const double r = model.grid_histogram_r;
    std::vector<double> unbiased;
    nlohmann::json bins = nlohmann::json::array();
    const auto histogram = discrete_laplace_histogram(outputs, r, metric.domain_size, clustering);
    for (uint32_t x = 0; x < histogram.size(); ++x) {
      const CountEstimate& e = histogram[x];
      unbiased.push_back(e.count);
      bins.push_back({{"value", x},
                      {"estimate", e.count},
                      {"stderr", e.std_error},
                      {"ci95", {e.ci95_low, e.ci95_high}}});
    }
    if (post == PostProcessing::kNormSub) {
      add_norm_sub(unbiased, static_cast<double>(summary.reports()), &bins, &out);
    }
    out["histogram"] = std::move(bins);
  }
  return out;
}

nlohmann::json numeric_estimate_json(const MetricConfig& metric, const NumericSummary& summary,
                                     PostProcessing post) {
  return numeric_estimate_json(
      metric, summary, DeviceClustering::one_report_per_device(summary.reports()), post);
}

}  // namespace blur::collector
