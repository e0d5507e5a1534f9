// A metric's estimate as JSON, the same for the HTTP API, the CLI and the
// simulator's offline fleet. Frequency oracles:
//
// {"metric_id": 1, "mechanism": "rr", "epsilon": 1.0, "domain_size": 2, "n": 20000,
//  "estimates": [{"value": 0, "estimate": ..., "stderr": ..., "ci95": [lo, hi],
//                 "fraction": ..., "fraction_ci95": [lo, hi]},
//                {"value": 1, ...}]}
//
// `estimate` is the unbiased count of devices with that value, `fraction`
// the same divided by n. Intervals are the normal approximation and are not
// clipped to [0, n], so they stay honest about the noise. Numeric
// mechanisms: see numeric_summary.h.
//
// With PostProcessing::kNormSub the object also has "postprocessing":
// "norm-sub" and every estimate an "estimate_normsub": non-negative counts
// summing to n (post_processing.h). They are biased; the unbiased fields
// are unchanged.
#ifndef BLUR_COLLECTOR_ESTIMATE_METRIC_ESTIMATE_H
#define BLUR_COLLECTOR_ESTIMATE_METRIC_ESTIMATE_H

#include <nlohmann/json.hpp>
#include <optional>

#include "estimate/numeric_summary.h"
#include "estimate/post_processing.h"
#include "estimate/support_counter.h"
#include "ingest/batch.h"
#include "metrics/metric_config.h"
#include "store/sqlite_store.h"

namespace blur::collector {

nlohmann::json estimate_json(const SupportCounter& support,
                             PostProcessing post = PostProcessing::kNone);

// A metric's validated reports, aggregated the way its mechanism needs:
// support counts for frequency oracles, a numeric summary for discrete
// Laplace. The server, the CLI and the offline fleet all estimate with it.
class MetricAggregate {
 public:
  explicit MetricAggregate(const MetricConfig& metric);
  // `value`: bit, index or number; `bits`: the bit vector (unary encodings).
  void add(int64_t value, const std::string& bits, uint64_t count = 1);
  void add(const IncomingReport& report);
  nlohmann::json estimate(PostProcessing post = PostProcessing::kNone) const;
  // The aggregate itself: support counts (frequency oracles, else null) and
  // the numeric summary (numeric mechanisms).
  const SupportCounter* support() const { return support_ ? &*support_ : nullptr; }
  const NumericSummary& summary() const { return summary_; }

 private:
  MetricConfig metric_;
  std::optional<SupportCounter> support_;  // frequency oracles
  NumericSummary summary_;                 // numeric mechanisms
};
nlohmann::json estimate_metric(const MetricConfig& metric, const SqliteStore& store,
                               PostProcessing post = PostProcessing::kNone);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_ESTIMATE_METRIC_ESTIMATE_H
