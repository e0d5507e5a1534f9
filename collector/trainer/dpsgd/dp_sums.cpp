#include "trainer/dpsgd/dp_sums.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "trainer/random/discrete_gaussian.h"

namespace blur::trainer {

namespace {

constexpr unsigned kLog2Sigma = 20;

// D = floor(2^20 / (sigma sqrt(m))), at least 1.
int64_t fixed_point_scale(double sigma, size_t m) {
  const double t = std::ldexp(1.0, kLog2Sigma);
  return static_cast<int64_t>(std::max(1.0, std::floor(t / (sigma * std::sqrt(double(m))))));
}

}  // namespace

double dp_sums_noise_multiplier(double sigma, size_t m) {
  return std::ldexp(1.0, kLog2Sigma) /
         (static_cast<double>(fixed_point_scale(sigma, m)) * std::sqrt(static_cast<double>(m)));
}

DpSums dp_sums(const std::vector<std::vector<double>>& per_unit, size_t m, double sigma,
               const TrainSeed& seed, std::string_view label) {
  if (!(sigma > 0) || !std::isfinite(sigma) || m == 0) {
    throw std::invalid_argument("dp_sums: need a noise multiplier > 0 and values per unit");
  }
  const int64_t scale = fixed_point_scale(sigma, m);
  std::vector<int64_t> totals(m, 0);
  for (const std::vector<double>& values : per_unit) {
    if (values.size() != m) throw std::invalid_argument("dp_sums: a unit has the wrong size");
    for (size_t i = 0; i < m; ++i) {
      const double v = std::isfinite(values[i]) ? std::clamp(values[i], 0.0, 1.0) : 0.0;
      totals[i] += static_cast<int64_t>(std::nearbyint(v * static_cast<double>(scale)));
    }
  }
  std::vector<int64_t> noise(m);
  DiscreteGaussianNoise(seed, label, 0).sample(noise.data(), m, kLog2Sigma, 1);
  DpSums out;
  out.noise_multiplier = dp_sums_noise_multiplier(sigma, m);
  for (size_t i = 0; i < m; ++i) {
    out.sums.push_back(static_cast<double>(totals[i] + noise[i]) / static_cast<double>(scale));
  }
  return out;
}

}  // namespace blur::trainer
