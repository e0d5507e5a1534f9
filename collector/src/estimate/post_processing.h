// Post-processing of unbiased frequency estimates, reported next to them,
// never instead of them (post-processed estimates are biased).
//
// Norm-Sub (Wang, Lopuhaä-Zwakenberg, Li, Skoric, Li, "Locally
// Differentially Private Frequency Estimation with Consistency", NDSS
// 2020): find the delta with sum_v max(c_v + delta, 0) = total and return
// max(c_v + delta, 0): non-negative counts that sum to the number of
// reports, in the order of the unbiased ones. Exact, O(d log d).
#ifndef BLUR_COLLECTOR_ESTIMATE_POST_PROCESSING_H
#define BLUR_COLLECTOR_ESTIMATE_POST_PROCESSING_H

#include <optional>
#include <string>
#include <vector>

namespace blur::collector {

enum class PostProcessing { kNone, kNormSub };

// "none" / "norm-sub"; nothing for anything else.
std::optional<PostProcessing> post_processing_from_name(const std::string& name);

// All zeros when total <= 0 (there is nothing to distribute).
std::vector<double> norm_sub(const std::vector<double>& estimates, double total);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_ESTIMATE_POST_PROCESSING_H
