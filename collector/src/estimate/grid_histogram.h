// The histogram of true values behind discrete Laplace reports.
//
// A report is y = x + Z with P(Z = z) = (1 - r)/(1 + r) r^|z|,
// r = exp(-eps / (k - 1)) on the grid 0..k-1. The pmf's z-transform is
// (1 - r)^2 / ((1 - r s)(1 - r/s)), so convolution with it is inverted
// exactly by the three-tap filter
//   c_x = [(1 + r^2) H(x) - r H(x - 1) - r H(x + 1)] / (1 - r)^2
// over the histogram H of outputs (all integers, also outside the grid):
// an unbiased count of devices at every grid point.
//
// Variance: c_x = sum_i w(y_i - x) with w(0) = (1 + r^2)/(1 - r)^2,
// w(+-1) = -r/(1 - r)^2, so Var = sum_i E[w^2] - sum_i E[w]^2 =
// sum_i E[w^2] - c_x (the filter inverts the noise, E[w(y_i - x)] =
// [x_i = x]). Estimated without bias by sum_i w(y_i - x)^2 - c_x, with the
// count clipped to [0, n] and the result to >= 0. Several reports per
// device: each term's variance is at most w(0)^2, and
// DeviceClustering::variance bounds the sum's.
#ifndef BLUR_COLLECTOR_ESTIMATE_GRID_HISTOGRAM_H
#define BLUR_COLLECTOR_ESTIMATE_GRID_HISTOGRAM_H

#include <cstdint>
#include <map>
#include <vector>

#include "estimate/device_clustering.h"
#include "estimate/frequency_oracle.h"

namespace blur::collector {

// The exact inverse filter and its variance estimate for grid points
// 0..grid_size-1, from output counts (any numeric type).
std::vector<CountEstimate> discrete_laplace_histogram(const std::map<int64_t, double>& outputs,
                                                      double r, uint32_t grid_size,
                                                      const DeviceClustering& clustering);

// Grids larger than this get the mean only (the histogram would be huge).
inline constexpr uint32_t kMaxHistogramGrid = 4096;

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_ESTIMATE_GRID_HISTOGRAM_H
