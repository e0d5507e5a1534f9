// The numeric family: discrete Laplace and 1BitMean (numeric_mean.h).
#include <cmath>

#include "mechanisms/mechanism_spec.h"

namespace blur::collector {

double discrete_laplace_noise_variance(const MetricConfig& metric) {
  const double r = std::exp(-(metric.epsilon_micros / 1e6) / (metric.domain_size - 1.0));
  return 2 * r / ((1 - r) * (1 - r));
}

namespace {

// The mean of the noisy values is unbiased (the noise has mean zero); the
// error of the mean is the mean of the noise, whose variance is known
// exactly.
NumericMean discrete_laplace_mean(const MetricConfig& metric) {
  NumericMean mean;
  mean.exact_noise = true;
  mean.noise_variance = discrete_laplace_noise_variance(metric);
  mean.variance_floor = mean.variance_ceiling = mean.noise_variance;
  mean.grid_histogram_r = std::exp(-(metric.epsilon_micros / 1e6) / (metric.domain_size - 1.0));
  return mean;
}

// M (b_bar (e^eps + 1) - 1) / (e^eps - 1), M = domain_size - 1. Memoized
// (memoized_mean.h): the bit b at the longitudinal epsilon, sent flipped
// with gamma = 1 / (e^eta + 1): E[sent] = gamma + (1 - 2 gamma) E[b]. The
// bits' sample variance bounds the conditional variance sum p_i (1 - p_i)
// / n^2 from above; p (1 - p) lies in [e^eps / (e^eps + 1)^2, 1/4].
NumericMean one_bit_mean(const MetricConfig& metric) {
  NumericMean mean;
  if (metric.longitudinal_epsilon_micros != 0) {
    const double e = std::exp(metric.longitudinal_epsilon_micros / 1e6);
    const double gamma = 1.0 / (std::exp(metric.epsilon_micros / 1e6) + 1.0);
    mean.scale = (metric.domain_size - 1.0) * (e + 1) / ((e - 1) * (1 - 2 * gamma));
    mean.offset = -(metric.domain_size - 1.0) / (e - 1) - mean.scale * gamma;
  } else {
    const double e = std::exp(metric.epsilon_micros / 1e6);
    mean.scale = (metric.domain_size - 1.0) * (e + 1) / (e - 1);
    mean.offset = -(metric.domain_size - 1.0) / (e - 1);
  }
  const double e = std::exp(metric.epsilon_micros / 1e6);
  mean.variance_floor = e / ((e + 1) * (e + 1));  // p (1 - p) at either end of the range
  mean.variance_ceiling = 0.25;
  return mean;
}

// A numeric mechanism keeps moments (aggregate/numeric_summary.h): no tally.
MechanismSpec numeric_spec(MechanismId id, NumericMean (*mean)(const MetricConfig&)) {
  MechanismSpec spec;
  spec.id = id;
  spec.numeric = true;
  spec.max_domain = mechanism_max_domain(id);
  spec.numeric_mean = mean;
  return spec;
}

}  // namespace

template <>
MechanismSpec make_spec<MechanismId::kDiscreteLaplace>() {
  return numeric_spec(MechanismId::kDiscreteLaplace, discrete_laplace_mean);
}

template <>
MechanismSpec make_spec<MechanismId::kOneBitMean>() {
  MechanismSpec spec = numeric_spec(MechanismId::kOneBitMean, one_bit_mean);
  spec.memoizable = true;
  return spec;
}

}  // namespace blur::collector
