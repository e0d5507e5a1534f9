#include "estimate/post_processing.h"

#include <algorithm>
#include <functional>

namespace blur::collector {

std::optional<PostProcessing> post_processing_from_name(const std::string& name) {
  if (name == "none") return PostProcessing::kNone;
  if (name == "norm-sub") return PostProcessing::kNormSub;
  return std::nullopt;
}

std::vector<double> norm_sub(const std::vector<double>& estimates, double total) {
  std::vector<double> out(estimates.size(), 0.0);
  if (estimates.empty() || !(total > 0)) return out;
  std::vector<double> sorted(estimates);
  std::sort(sorted.begin(), sorted.end(), std::greater<double>());
  // With the k largest kept, delta_k = (total - their sum) / k. The answer
  // is the largest k whose k-th largest value stays positive after the
  // shift: sum over kept values of (c + delta_k) is then exactly total and
  // every dropped value has c + delta_k <= 0.
  double prefix = 0, delta = 0;
  for (size_t k = 1; k <= sorted.size(); ++k) {
    prefix += sorted[k - 1];
    const double candidate = (total - prefix) / static_cast<double>(k);
    if (sorted[k - 1] + candidate > 0) delta = candidate;
  }
  for (size_t v = 0; v < estimates.size(); ++v) out[v] = std::max(estimates[v] + delta, 0.0);
  return out;
}

}  // namespace blur::collector
