// How a numeric mechanism's reports estimate the mean of the devices' true
// values: both estimators are affine in the reports' mean, and each report's
// variance is known exactly (discrete Laplace's noise) or bounded (1BitMean's
// bit). estimate/numeric_estimate.cpp turns this into estimates.
#ifndef BLUR_COLLECTOR_MECHANISMS_NUMERIC_MEAN_H
#define BLUR_COLLECTOR_MECHANISMS_NUMERIC_MEAN_H

#include "model/metric_config.h"

namespace blur::collector {

struct NumericMean {
  // mean = offset + scale * the reports' mean.
  double offset = 0;
  double scale = 1;
  // Discrete Laplace: true, and a report's variance is exactly
  // noise_variance (Var(Z) of the noise, conditional on the devices'
  // values). Else it is estimated by the reports' sample variance, within
  // [variance_floor, variance_ceiling].
  bool exact_noise = false;
  double noise_variance = 0;
  double variance_floor = 0;
  double variance_ceiling = 0;
  // > 0: the noise is two-sided geometric with this r on the grid, so the
  // histogram of the grid points is estimated too (estimate/grid_histogram.h).
  double grid_histogram_r = 0;
};

// Var(Z) of the discrete Laplace noise of a metric: 2r / (1 - r)^2 with
// r = exp(-eps / (k - 1)).
double discrete_laplace_noise_variance(const MetricConfig& metric);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_MECHANISMS_NUMERIC_MEAN_H
