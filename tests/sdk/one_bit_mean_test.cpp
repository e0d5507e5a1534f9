#include "blur/mechanisms/one_bit_mean.h"

#include <gtest/gtest.h>
#include <math.h>

#include "blur/sampling/rng.h"
#include "sim_port.h"
#include "stats.h"

namespace {

using blur::OneBitMean;
using blur::Status;

TEST(OneBitMean, BuilderValidates) {
  EXPECT_EQ(OneBitMean::create(0, 11).status(), Status::kInvalidArgument);
  EXPECT_EQ(OneBitMean::create(1000000, 1).status(), Status::kInvalidArgument);
  const auto onebit = OneBitMean::create(1000000, 11);
  ASSERT_TRUE(onebit.ok());
  EXPECT_EQ(onebit.value().epsilon_charged(), 1000000u);
}

// P(1 | x) = 1/(e^eps + 1) + (x/M)(e^eps - 1)/(e^eps + 1) for x = 0, M/2, M
// (false-alarm rate 1e-6 per check; each sample also rejects a marginal off
// by 0.02, 12 standard errors away), and ln(P(1 | M) / P(1 | 0)) = eps within 5 standard errors
// (the largest output-probability ratio: the empirical privacy loss).
TEST(OneBitMean, MarginalsAndPrivacyLoss) {
  blur::sim::SimPort port(51);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const uint64_t n = 100000;
  for (uint32_t epsilon_micros : {500000u, 2000000u}) {
    const auto onebit = OneBitMean::create(epsilon_micros, 11);
    ASSERT_TRUE(onebit.ok());
    const double e = exp(epsilon_micros / 1e6);
    double p[3];
    const uint32_t inputs[3] = {0, 5, 10};
    for (int k = 0; k < 3; ++k) {
      uint64_t ones = 0;
      for (uint64_t i = 0; i < n; ++i) {
        uint32_t out = 0;
        ASSERT_EQ(onebit.value().randomize(rng, inputs[k], &out), Status::kOk);
        ones += out;
      }
      const double expected = 1 / (e + 1) + (inputs[k] / 10.0) * (e - 1) / (e + 1);
      EXPECT_LT(fabs(blur_test::binomial_z(ones, n, expected)), blur_test::kZ1e6);
      EXPECT_GT(fabs(blur_test::binomial_z(ones, n, expected + 0.02)), blur_test::kZ1e6);
      p[k] = static_cast<double>(ones) / n;
    }
    const double se = sqrt((1 - p[2]) / (n * p[2]) + (1 - p[0]) / (n * p[0]));
    EXPECT_LT(fabs(log(p[2] / p[0]) - epsilon_micros / 1e6), 5 * se);
  }
}

}  // namespace
