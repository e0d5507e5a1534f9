#include "blur/mechanisms/discrete_laplace.h"

#include <gtest/gtest.h>
#include <math.h>

#include "blur/sampling/rng.h"
#include "sim_port.h"
#include "stats.h"

namespace {

using blur::DiscreteLaplace;
using blur::Status;

TEST(DiscreteLaplace, BuilderValidates) {
  EXPECT_EQ(DiscreteLaplace::create(0, 10).status(), Status::kInvalidArgument);
  EXPECT_EQ(DiscreteLaplace::create(1000000, 1).status(), Status::kInvalidArgument);
  EXPECT_EQ(DiscreteLaplace::create(1000000, (1u << 24) + 1).status(), Status::kInvalidArgument);
  const auto laplace = DiscreteLaplace::create(750000, 101);
  ASSERT_TRUE(laplace.ok());
  EXPECT_EQ(laplace.value().epsilon_charged(), 750000u);
  int64_t out = 0;
  blur::sim::SimPort port(1);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  EXPECT_EQ(laplace.value().randomize(rng, 101, &out), Status::kInvalidArgument);
}

// Empirical privacy audit at the worst pair of inputs (0 and k - 1, the
// whole sensitivity apart): for every output o <= 0 the likelihood ratio is
// exactly e^eps, so P(o <= 0 | 0) / P(o <= 0 | k - 1) = e^eps. Checked within
// 5 standard errors of the log-ratio (false-alarm rate 6e-7 per case). Also:
// the mean of the reports is unbiased (within 5 standard errors, with
// Var(Z) = 2r / (1 - r)^2).
TEST(DiscreteLaplace, PrivacyLossAndUnbiasedMean) {
  blur::sim::SimPort port(41);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const uint64_t n = 100000;
  const struct {
    uint32_t epsilon_micros, domain;
  } cases[] = {{1000000, 5}, {2000000, 3}, {500000, 11}};
  for (const auto& c : cases) {
    const auto laplace = DiscreteLaplace::create(c.epsilon_micros, c.domain);
    ASSERT_TRUE(laplace.ok());
    uint64_t low_from_0 = 0, low_from_top = 0;
    double sum = 0;
    for (uint64_t i = 0; i < n; ++i) {
      int64_t out = 0;
      ASSERT_EQ(laplace.value().randomize(rng, 0, &out), Status::kOk);
      low_from_0 += out <= 0;
      sum += static_cast<double>(out);
      ASSERT_EQ(laplace.value().randomize(rng, c.domain - 1, &out), Status::kOk);
      low_from_top += out <= 0;
    }
    const double pa = static_cast<double>(low_from_0) / n;
    const double pb = static_cast<double>(low_from_top) / n;
    const double se = sqrt((1 - pa) / (n * pa) + (1 - pb) / (n * pb));
    const double epsilon = c.epsilon_micros / 1e6;
    EXPECT_LT(fabs(log(pa / pb) - epsilon), 5 * se) << "domain " << c.domain;
    const double r = exp(-epsilon / (c.domain - 1));
    const double noise_variance = 2 * r / ((1 - r) * (1 - r));
    EXPECT_LT(fabs(sum / n), 5 * sqrt(noise_variance / n)) << "domain " << c.domain;
  }
}

}  // namespace
