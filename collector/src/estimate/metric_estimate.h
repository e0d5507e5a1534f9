// A metric's estimate as JSON, the same for the HTTP API, the CLI and the
// simulator's offline fleet:
//
// {"metric_id": 1, "mechanism": "rr", "epsilon": 1.0, "domain_size": 2, "n": 20000,
//  "estimates": [{"value": 0, "estimate": ..., "stderr": ..., "ci95": [lo, hi],
//                 "fraction": ..., "fraction_ci95": [lo, hi]},
//                {"value": 1, ...}]}
//
// `estimate` is the unbiased count of devices with that value, `fraction`
// the same divided by n. Intervals are the normal approximation and are not
// clipped to [0, n], so they stay honest about the noise.
#ifndef BLUR_COLLECTOR_ESTIMATE_METRIC_ESTIMATE_H
#define BLUR_COLLECTOR_ESTIMATE_METRIC_ESTIMATE_H

#include <nlohmann/json.hpp>

#include "estimate/support_counter.h"
#include "metrics/metric_config.h"
#include "store/sqlite_store.h"

namespace blur::collector {

nlohmann::json estimate_json(const SupportCounter& support);
nlohmann::json estimate_metric(const MetricConfig& metric, const SqliteStore& store);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_ESTIMATE_METRIC_ESTIMATE_H
