// Numeric reports. Discrete Laplace: the mean of the noisy values is an
// unbiased estimate of the mean of the devices' true values, because the
// noise has mean zero; its standard error is exact, sqrt(Var(Z) / n) with
// Var(Z) = 2r / (1 - r)^2, r = exp(-eps / (k - 1)). Like the frequency
// estimates, it is conditional on the devices' values (the estimand is the
// fleet's own mean; for a population mean add the data's variance / n).
// 1BitMean: see numeric_estimate_json. The mechanism's own formulas are in
// its spec (mechanisms/numeric_mean.h).
#ifndef BLUR_COLLECTOR_ESTIMATE_NUMERIC_ESTIMATE_H
#define BLUR_COLLECTOR_ESTIMATE_NUMERIC_ESTIMATE_H

#include <nlohmann/json.hpp>

#include "aggregate/numeric_summary.h"
#include "estimate/device_clustering.h"
#include "estimate/post_processing.h"
#include "mechanisms/numeric_mean.h"
#include "model/metric_config.h"

namespace blur::collector {

// {"estimates": [{"value": "mean", "estimate", "stderr", "ci95"}],
//  "grid_step": 1, ...} (metric fields as for frequencies). For discrete
// Laplace the summary holds the noisy values and "noise_variance" is added;
// for 1BitMean it holds the bits, and the mean is
// M (b_bar (e^eps + 1) - 1) / (e^eps - 1), M = domain_size - 1, with the
// standard error scaled alike from the bits' sample variance.
//
// Discrete Laplace also gets "histogram": [{"value": x, "estimate",
// "stderr", "ci95"}] for x in 0..k-1 (k <= kMaxHistogramGrid): unbiased
// counts of devices per grid point (grid_histogram.h); with kNormSub each
// bin also has "estimate_normsub".
//
// Several reports per device (`clustering`, whose reports() is the
// summary's): both means are sums of per-report terms, the noise Z (variance
// exactly Var(Z)) or the bit (variance p(1-p) in [e^eps/(e^eps+1)^2, 1/4]),
// so DeviceClustering::variance bounds their variance; the histogram's
// too (grid_histogram.h).
nlohmann::json numeric_estimate_json(const MetricConfig& metric, const NumericSummary& summary,
                                     const DeviceClustering& clustering,
                                     PostProcessing post = PostProcessing::kNone);
// The same with every report from a device of its own (tools and tests that
// know it; the collector's answers pass the store's clustering).
nlohmann::json numeric_estimate_json(const MetricConfig& metric, const NumericSummary& summary,
                                     PostProcessing post = PostProcessing::kNone);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_ESTIMATE_NUMERIC_ESTIMATE_H
