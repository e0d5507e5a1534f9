#include "estimate/numeric_estimate.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "estimate/grid_histogram.h"
#include "mechanisms/mechanism_spec.h"

namespace blur::collector {

NumericEstimate estimate_numeric(const MetricConfig& metric, const NumericSummary& summary,
                                 const DeviceClustering& clustering) {
  NumericEstimate out;
  out.reports = summary.reports();
  // Both estimators are affine in the reports: mean = offset + scale * report_mean.
  const NumericMean model = mechanism_spec(metric.mechanism).numeric_mean(metric);
  if (model.exact_noise) out.noise_variance = model.noise_variance;
  if (summary.reports() == 0) return out;
  const double mean = model.offset + model.scale * summary.mean();
  // Discrete Laplace: the error of the mean is the mean of the noise, whose
  // variance is known exactly (conditional on the devices' values, as for
  // the frequency oracles). 1BitMean: the bits' sample variance, which
  // bounds the conditional variance sum p_i (1 - p_i) / n^2 from above.
  // Both as the variance of the sum of the n reports, then clustered.
  const double n = static_cast<double>(summary.reports());
  const double independent =
      model.exact_noise ? n * model.noise_variance : n * summary.sample_variance();
  const double stderr_mean =
      model.scale *
      std::sqrt(std::max(
          clustering.variance(independent, model.variance_floor, model.variance_ceiling), 0.0)) /
      n;
  out.mean = CountEstimate{mean, stderr_mean, mean - kZ95 * stderr_mean, mean + kZ95 * stderr_mean};
  if (model.grid_histogram_r > 0 && metric.domain_size <= kMaxHistogramGrid) {
    const std::map<int64_t, double> outputs(summary.histogram().begin(), summary.histogram().end());
    out.histogram =
        discrete_laplace_histogram(outputs, model.grid_histogram_r, metric.domain_size, clustering);
  }
  return out;
}

}  // namespace blur::collector
