#include "estimate/grid_histogram.h"

#include <gtest/gtest.h>

#include <cmath>

#include "blur/mechanisms/discrete_laplace.h"
#include "blur/sampling/rng.h"
#include "sim_port.h"

namespace {

using namespace blur::collector;

double pmf(int64_t z, double r) { return (1 - r) / (1 + r) * std::pow(r, std::abs(z)); }

// Fed the exact expected output histogram of a known distribution (tails
// truncated far beyond double precision), the filter returns the true
// counts: it is the exact inverse of the noise.
// Every report from a device of its own: the textbook variance.
const DeviceClustering one_each = DeviceClustering::one_report_per_device(1);

TEST(GridHistogram, InvertsTheExpectedHistogramExactly) {
  for (double r : {0.3, 0.8, 0.95}) {
    const uint32_t k = 7;
    const double truth[k] = {100, 0, 40, 7, 0, 0, 300};
    std::map<int64_t, double> expected;
    const int64_t tail = static_cast<int64_t>(800 / -std::log(r));
    for (int64_t y = -tail; y < k + tail; ++y) {
      double e = 0;
      for (uint32_t x = 0; x < k; ++x) e += truth[x] * pmf(y - x, r);
      expected[y] = e;
    }
    const auto histogram = discrete_laplace_histogram(expected, r, k, one_each);
    for (uint32_t x = 0; x < k; ++x) EXPECT_NEAR(histogram[x].count, truth[x], 1e-7) << r;
  }
}

// The real SDK sampler, T = 1000 fleets of n = 400 devices per case, grids
// of 5 and 21 points, eps in {0.5, 1, 2, 4}: for an occupied and an empty
// grid point, the mean error is within 5 standard errors of zero (false
// alarm 6e-7) and the empirical variance / exact variance is within
// 1 +- 5 sqrt(2/(T-1)) (~1e-6 per check); the mean of the reported
// variance estimates matches the exact variance to the same tolerance.
TEST(GridHistogram, UnbiasedWithTheDerivedVariance) {
  const int trials = 1000;
  const uint64_t n = 400;
  for (uint32_t k : {5u, 21u}) {
    for (uint32_t epsilon_micros : {500000u, 1000000u, 2000000u, 4000000u}) {
      const auto laplace = blur::DiscreteLaplace::create(epsilon_micros, k);
      ASSERT_TRUE(laplace.ok());
      const double r = std::exp(-(epsilon_micros / 1e6) / (k - 1.0));
      const double scale = (1 - r) * (1 - r);
      const double w0 = (1 + r * r) / scale, w1 = -r / scale;
      // Devices: 60% at 0, the rest spread over the grid's upper half.
      std::vector<double> counts(k, 0.0);
      for (uint64_t i = 0; i < n; ++i) counts[i < 6 * n / 10 ? 0 : k / 2 + i % (k - k / 2)] += 1;
      blur::sim::SimPort port(k * 100 + epsilon_micros / 100000);
      blur::Rng rng;
      ASSERT_EQ(rng.seed(port.port(), nullptr, 0), blur::Status::kOk);
      const uint32_t checked[2] = {0, 1};  // occupied, empty
      double sum[2] = {}, sum_squares[2] = {}, reported[2] = {};
      for (int t = 0; t < trials; ++t) {
        std::map<int64_t, double> outputs;
        for (uint32_t x = 0; x < k; ++x) {
          for (uint64_t i = 0; i < static_cast<uint64_t>(counts[x]); ++i) {
            int64_t y = 0;
            ASSERT_EQ(laplace.value().randomize(rng, x, &y), blur::Status::kOk);
            outputs[y] += 1;
          }
        }
        const auto histogram = discrete_laplace_histogram(outputs, r, k, one_each);
        for (int c = 0; c < 2; ++c) {
          const double e = histogram[checked[c]].count;
          sum[c] += e;
          sum_squares[c] += e * e;
          reported[c] += histogram[checked[c]].std_error * histogram[checked[c]].std_error;
        }
      }
      for (int c = 0; c < 2; ++c) {
        const uint32_t x = checked[c];
        // Exact: sum_u c_u E_u[w(y - x)^2] - c_x.
        double exact = -counts[x];
        for (uint32_t u = 0; u < k; ++u) {
          exact += counts[u] * (w0 * w0 * pmf(static_cast<int64_t>(x) - u, r) +
                                w1 * w1 *
                                    (pmf(static_cast<int64_t>(x) - 1 - u, r) +
                                     pmf(static_cast<int64_t>(x) + 1 - u, r)));
        }
        const double mean = sum[c] / trials;
        const double variance = (sum_squares[c] - trials * mean * mean) / (trials - 1);
        const double tolerance = 5 * std::sqrt(2.0 / (trials - 1));
        EXPECT_LT(std::fabs(mean - counts[x]), 5 * std::sqrt(exact / trials))
            << "k " << k << " eps " << epsilon_micros << " x " << x;
        EXPECT_NEAR(variance / exact, 1.0, tolerance)
            << "k " << k << " eps " << epsilon_micros << " x " << x;
        EXPECT_NEAR(reported[c] / trials / exact, 1.0, tolerance)
            << "k " << k << " eps " << epsilon_micros << " x " << x;
      }
    }
  }
}

}  // namespace
