#include "estimate/grid_histogram.h"

#include <algorithm>
#include <cmath>

namespace blur::collector {

std::vector<CountEstimate> discrete_laplace_histogram(const std::map<int64_t, double>& outputs,
                                                      double r, uint32_t grid_size,
                                                      const DeviceClustering& clustering) {
  const double scale = (1 - r) * (1 - r);
  const double w0 = (1 + r * r) / scale, w1 = -r / scale;
  double n = 0;
  for (const auto& [y, count] : outputs) n += count;
  const auto at = [&](int64_t y) {
    const auto it = outputs.find(y);
    return it == outputs.end() ? 0.0 : it->second;
  };
  std::vector<CountEstimate> out;
  out.reserve(grid_size);
  for (uint32_t x = 0; x < grid_size; ++x) {
    const double center = at(x), sides = at(static_cast<int64_t>(x) - 1) + at(x + 1);
    const double count = w0 * center + w1 * sides;
    const double independent =
        std::max(w0 * w0 * center + w1 * w1 * sides - std::clamp(count, 0.0, n), 0.0);
    const double variance = clustering.variance(independent, 0.0, w0 * w0);
    const double se = std::sqrt(variance);
    out.push_back(CountEstimate{count, se, count - kZ95 * se, count + kZ95 * se});
  }
  return out;
}

}  // namespace blur::collector
