// Numeric reports. Discrete Laplace: the mean of the noisy values is an
// unbiased estimate of the mean of the devices' true values, because the
// noise has mean zero; its standard error is exact, sqrt(Var(Z) / n) with
// Var(Z) = 2r / (1 - r)^2, r = exp(-eps / (k - 1)). Like the frequency
// estimates, it is conditional on the devices' values (the estimand is the
// fleet's own mean; for a population mean add the data's variance / n).
// 1BitMean: the mean is M (b_bar (e^eps + 1) - 1) / (e^eps - 1), M =
// domain_size - 1, with the standard error scaled alike from the bits'
// sample variance. The mechanism's own formulas are in its spec
// (mechanisms/numeric_mean.h); api/numeric_estimate_json.h renders this.
#ifndef BLUR_COLLECTOR_ESTIMATE_NUMERIC_ESTIMATE_H
#define BLUR_COLLECTOR_ESTIMATE_NUMERIC_ESTIMATE_H

#include <optional>
#include <vector>

#include "aggregate/numeric_summary.h"
#include "estimate/device_clustering.h"
#include "estimate/frequency_oracle.h"
#include "mechanisms/numeric_mean.h"
#include "model/metric_config.h"

namespace blur::collector {

struct NumericEstimate {
  uint64_t reports = 0;
  // Discrete Laplace: Var(Z) of its noise (exact).
  std::optional<double> noise_variance;
  // The devices' mean, in grid units; none without reports.
  std::optional<CountEstimate> mean;
  // Discrete Laplace on a grid of k <= kMaxHistogramGrid points (with
  // reports): unbiased counts of devices per grid point x in 0..k-1
  // (grid_histogram.h).
  std::vector<CountEstimate> histogram;
};

// Several reports per device (`clustering`, whose reports() is the
// summary's): both means are sums of per-report terms, the noise Z (variance
// exactly Var(Z)) or the bit (variance p(1-p) in [e^eps/(e^eps+1)^2, 1/4]),
// so DeviceClustering::variance bounds their variance; the histogram's
// too (grid_histogram.h).
NumericEstimate estimate_numeric(const MetricConfig& metric, const NumericSummary& summary,
                                 const DeviceClustering& clustering);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_ESTIMATE_NUMERIC_ESTIMATE_H
