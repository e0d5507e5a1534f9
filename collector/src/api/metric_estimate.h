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
// mechanisms: see estimate/numeric_estimate.h.
//
// Every answer says how its intervals were computed: "variance":
// "independent reports (one per device)" or "device-clustered (design
// effect 3.2 over 1,204 devices)" (device_clustering.h), and
// "design_effect": S2 / n. Word discovery adds "intervals": "conditional on
// selection" (the words were chosen on the same reports).
//
// With PostProcessing::kNormSub the object also has "postprocessing":
// "norm-sub" and every estimate an "estimate_normsub": non-negative counts
// summing to n (post_processing.h). They are biased; the unbiased fields
// are unchanged.
#ifndef BLUR_COLLECTOR_API_METRIC_ESTIMATE_H
#define BLUR_COLLECTOR_API_METRIC_ESTIMATE_H

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "aggregate/aggregate.h"
#include "estimate/device_clustering.h"
#include "estimate/frequency_oracle.h"
#include "estimate/post_processing.h"
#include "util/cancellation.h"
#include "api/value_selection.h"
#include "util/json_writer.h"

namespace blur::collector {

// The estimate of the reports an aggregate holds: frequencies for frequency
// oracles, the mean (and, for discrete Laplace, the histogram) for numeric
// mechanisms. The server, the CLI and the offline fleet all estimate with it.
// Written straight as text (an answer of thousands of values): the members
// go into the object `out` has open.
// Word-discovery (pem, sfp) metrics answer their top_k words (discovery/
// word_discovery.h) instead of per-value estimates.
inline constexpr uint32_t kDefaultTopK = 32;
// At most the bytes one value's entry of "estimates" takes: seven numbers
// of at most 24 characters (shortest round-trip form), an eighth with
// norm-sub, their names and punctuation. What a large answer reserves up
// front: an upper bound, so the text is never copied to a larger buffer
// (pages reserved and not written cost nothing).
inline constexpr size_t kEstimateJsonBytes = 300;
inline constexpr uint32_t kMaxTopK = 1000;
// `clustering`: how the aggregate's reports are spread over devices (the
// store's counts; DeviceClustering::one_report_per_device only where that
// is known to hold).
void write_estimate(const Aggregate& aggregate, const DeviceClustering& clustering,
                    PostProcessing post, JsonWriter& out, uint32_t top_k = kDefaultTopK);

class DiscoveryCache;
// What a word discovery needs besides the aggregate: the words asked for,
// results found before (discovery_cache.h; null: none) and when to give up
// (null: never).
struct DiscoveryControls {
  uint32_t top_k = kDefaultTopK;
  DiscoveryCache* cache = nullptr;
  const Cancellation* cancel = nullptr;
};
// The same; false, with `out` incomplete, if the discovery was cancelled.
// `values` (frequency oracles; null: every value): the values "estimates"
// lists (value_selection.h).
[[nodiscard]] bool write_estimate(const Aggregate& aggregate, const DeviceClustering& clustering,
                                  PostProcessing post, JsonWriter& out,
                                  const DiscoveryControls& discovery,
                                  const ValueSelection* values = nullptr);
// The same estimate typed, before it becomes text: what the JSON answer of
// frequency oracles and word discovery is written from, and what export
// rows (result_rows.h) are flattened from. A numeric metric's is its mean
// only (its JSON, numeric_estimate_json.h, also has the histogram).
struct ValueEstimate {
  uint32_t value = 0;  // kFrequencies: the value of the domain
  std::string word;    // kWords: the discovered word (untrusted text from devices)
  CountEstimate estimate{};
  std::optional<double> estimate_normsub;  // with PostProcessing::kNormSub
};
struct EstimateTable {
  enum class Shape { kFrequencies, kWords, kMean };
  Shape shape = Shape::kFrequencies;
  uint64_t n = 0;  // reports
  double design_effect = 1;
  // kFrequencies: every value of the domain, or the selected ones (none
  // without reports); kWords:
  // the discovered words, decreasing estimate; kMean: the mean (none
  // without reports).
  std::vector<ValueEstimate> values;
};
// nullopt if the word discovery was cancelled. `values`: as above.
std::optional<EstimateTable> estimate_table(const Aggregate& aggregate,
                                            const DeviceClustering& clustering, PostProcessing post,
                                            const DiscoveryControls& discovery,
                                            const ValueSelection* values = nullptr);

std::string estimate_text(const Aggregate& aggregate, const DeviceClustering& clustering,
                          PostProcessing post = PostProcessing::kNone);
// The same, parsed (for tools that read the estimate back).
nlohmann::json estimate_json(const Aggregate& aggregate, const DeviceClustering& clustering,
                             PostProcessing post = PostProcessing::kNone);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_API_METRIC_ESTIMATE_H
