// A numeric metric's estimate (estimate/numeric_estimate.h) as JSON:
// {"estimates": [{"value": "mean", "estimate", "stderr", "ci95"}],
//  "grid_step": 1, ...} (metric fields as for frequencies); discrete Laplace
// adds "noise_variance" and, on a grid of at most kMaxHistogramGrid points,
// "histogram": [{"value": x, "estimate", "stderr", "ci95"}] (with kNormSub
// each bin also has "estimate_normsub").
#ifndef BLUR_COLLECTOR_API_NUMERIC_ESTIMATE_JSON_H
#define BLUR_COLLECTOR_API_NUMERIC_ESTIMATE_JSON_H

#include <nlohmann/json.hpp>

#include "estimate/numeric_estimate.h"
#include "estimate/post_processing.h"

namespace blur::collector {

nlohmann::json numeric_estimate_json(const MetricConfig& metric, const NumericSummary& summary,
                                     const DeviceClustering& clustering,
                                     PostProcessing post = PostProcessing::kNone);
// The same with every report from a device of its own (tools and tests that
// know it; the collector's answers pass the store's clustering).
nlohmann::json numeric_estimate_json(const MetricConfig& metric, const NumericSummary& summary,
                                     PostProcessing post = PostProcessing::kNone);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_API_NUMERIC_ESTIMATE_JSON_H
