#include "trainer/dpsgd/noise_grid.h"

#include <cmath>
#include <stdexcept>

#include "trainer/random/discrete_gaussian.h"

namespace blur::trainer {

NoiseGrid noise_grid(double sigma, double clip, size_t parameters) {
  if (!(sigma > 0) || !std::isfinite(sigma) || !(clip > 0) || !std::isfinite(clip) ||
      parameters == 0) {
    throw std::invalid_argument("noise_grid: need sigma > 0, a finite clip norm and parameters");
  }
  const double root = std::sqrt(static_cast<double>(parameters));
  NoiseGrid grid;
  grid.log2_sigma = 20;
  while (grid.log2_sigma < DiscreteGaussianNoise::kMaxLog2Sigma &&
         root * sigma > std::ldexp(1.0, static_cast<int>(grid.log2_sigma) - 10)) {
    ++grid.log2_sigma;
  }
  grid.step = sigma * clip / std::ldexp(1.0, static_cast<int>(grid.log2_sigma));
  const double margin = root * grid.step * (1 + std::ldexp(1.0, -20));
  if (!(margin < clip / 2)) {
    throw std::invalid_argument("noise_grid: sigma too large for the grid (sqrt(P) sigma > 2^29)");
  }
  grid.clip_for_sum = clip - margin;
  return grid;
}

}  // namespace blur::trainer
