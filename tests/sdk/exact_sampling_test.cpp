#include "blur/sampling/exact_sampling.h"

#include <gtest/gtest.h>
#include <math.h>

#include "blur/sampling/rng.h"
#include "scripted_random.h"
#include "sim_port.h"
#include "stats.h"

namespace {

using blur::Status;
using blur_test::ScriptedRandomForFaultInjection;

// Frequency of Bern(exp(-n/d)) against exp(-n/d), for n/d below, at and
// above 1 (the integer-part loop). False-alarm rate 1e-6 per case; each
// sample also rejects a marginal shifted by 0.01.
TEST(ExactSampling, BernoulliExpMatchesExp) {
  blur::sim::SimPort port(11);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const uint64_t n = 200000;
  const struct {
    uint64_t num, den;
  } cases[] = {{0, 1}, {3, 10}, {1, 1}, {5, 2}, {1234567, 1000000}};
  for (const auto& c : cases) {
    uint64_t ones = 0;
    for (uint64_t i = 0; i < n; ++i) {
      bool b = false;
      ASSERT_EQ(blur::sample_bernoulli_exp(rng, c.num, c.den, &b), Status::kOk);
      ones += b;
    }
    const double p = exp(-static_cast<double>(c.num) / static_cast<double>(c.den));
    if (c.num == 0) {
      EXPECT_EQ(ones, n);
      continue;
    }
    EXPECT_LT(fabs(blur_test::binomial_z(ones, n, p)), blur_test::kZ1e6) << c.num << "/" << c.den;
    EXPECT_GT(fabs(blur_test::binomial_z(ones, n, p + 0.01)), blur_test::kZ1e6);
  }
}

TEST(ExactSampling, BernoulliMatchesRational) {
  blur::sim::SimPort port(12);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const uint64_t n = 200000;
  uint64_t ones = 0;
  for (uint64_t i = 0; i < n; ++i) {
    bool b = false;
    ASSERT_EQ(blur::sample_bernoulli(rng, 1, 3, &b), Status::kOk);
    ones += b;
  }
  EXPECT_LT(fabs(blur_test::binomial_z(ones, n, 1.0 / 3)), blur_test::kZ1e6);
}

// Discrete Laplace, P(z) = (1 - r) / (1 + r) r^|z| with r = exp(-s/t):
//  - chi-square over z in [-K, K] plus two tail bins (every expected count
//    >= 5), false-alarm rate 1e-6 per case; the sample also rejects the
//    distribution of a scale 10% off;
//  - symmetry: #(z > 0) vs #(z < 0) is Binomial(., 1/2), |z-score| < 4.89;
//  - empirical privacy loss: P(|z| >= 2 | |z| >= 1) = r (the slope of the
//    log-pmf), binomial z-score < 4.89.
TEST(ExactSampling, DiscreteLaplaceMatchesItsPmf) {
  blur::sim::SimPort port(13);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const uint64_t n = 100000;
  const struct { uint64_t t, s; } cases[] = {{1, 1}, {5, 2}, {3000000, 1000000}, {7, 20}};
  for (const auto& c : cases) {
    const double r = exp(-static_cast<double>(c.s) / static_cast<double>(c.t));
    int k = 0;  // widest window whose bins all expect >= 5
    while (n * (1 - r) / (1 + r) * pow(r, k + 1) >= 5 && n * pow(r, k + 2) / (1 + r) >= 5) ++k;
    static uint64_t counts[512];
    static double pmf[512], wrong[512];
    const int bins = 2 * k + 3;
    ASSERT_LE(bins, 512);
    for (int b = 0; b < bins; ++b) counts[b] = 0;
    uint64_t positive = 0, negative = 0, at_least_one = 0, at_least_two = 0;
    for (uint64_t i = 0; i < n; ++i) {
      int64_t z = 0;
      ASSERT_EQ(blur::sample_discrete_laplace(rng, c.t, c.s, &z), Status::kOk);
      const int bin = z < -k ? 0 : z > k ? bins - 1 : static_cast<int>(z) + k + 1;
      ++counts[bin];
      positive += z > 0;
      negative += z < 0;
      at_least_one += z != 0;
      at_least_two += z >= 2 || z <= -2;
    }
    const double r_wrong = exp(-1.1 * static_cast<double>(c.s) / static_cast<double>(c.t));
    for (int b = 0; b < bins; ++b) {
      const int z = b - k - 1;
      const auto point = [](double rr, int zz) {
        return (1 - rr) / (1 + rr) * pow(rr, zz < 0 ? -zz : zz);
      };
      const auto tail = [k](double rr) { return pow(rr, k + 1) / (1 + rr); };
      pmf[b] = (b == 0 || b == bins - 1) ? tail(r) : point(r, z);
      wrong[b] = (b == 0 || b == bins - 1) ? tail(r_wrong) : point(r_wrong, z);
    }
    const double critical = blur_test::chi_square_critical_1e6(bins - 1);
    EXPECT_LT(blur_test::chi_square(counts, pmf, bins, n), critical) << "t " << c.t << " s " << c.s;
    EXPECT_GT(blur_test::chi_square(counts, wrong, bins, n), critical)
        << "t " << c.t << " s " << c.s;
    EXPECT_LT(fabs(blur_test::binomial_z(positive, positive + negative, 0.5)), blur_test::kZ1e6);
    EXPECT_LT(fabs(blur_test::binomial_z(at_least_two, at_least_one, r)), blur_test::kZ1e6);
  }
}

TEST(ExactSampling, RejectsInvalidParameters) {
  ScriptedRandomForFaultInjection random(ScriptedRandomForFaultInjection::Mode::kAlwaysZero);
  bool b = false;
  EXPECT_EQ(blur::sample_bernoulli(random, 1, 0, &b), Status::kInvalidArgument);
  EXPECT_EQ(blur::sample_bernoulli(random, 3, 2, &b), Status::kInvalidArgument);
  EXPECT_EQ(blur::sample_bernoulli_exp(random, 1, 0, &b), Status::kInvalidArgument);
  EXPECT_EQ(blur::sample_bernoulli_exp_at_most_one(random, 2, 1, &b), Status::kInvalidArgument);
  EXPECT_EQ(blur::sample_bernoulli_exp_at_most_one(random, 1, UINT64_MAX / 2, &b),
            Status::kInvalidArgument);
  int64_t z = 0;
  EXPECT_EQ(blur::sample_discrete_laplace(random, 0, 1, &z), Status::kInvalidArgument);
  EXPECT_EQ(blur::sample_discrete_laplace(random, 1, 0, &z), Status::kInvalidArgument);
  EXPECT_EQ(random.draws(), 0u);
}

// Draws of 0 make every Bern(n/(dk)) succeed: the series never ends. The
// coin stops at its cap and answers true (P(true) >= exp(-n/d), the side
// that keeps the race's charge: exact_sampling.h).
TEST(ExactSampling, SeriesCapAnswersTrue) {
  ScriptedRandomForFaultInjection random(ScriptedRandomForFaultInjection::Mode::kAlwaysZero);
  bool b = false;
  EXPECT_EQ(blur::sample_bernoulli_exp(random, 1, 2, &b), Status::kOk);
  EXPECT_TRUE(b);
  EXPECT_EQ(random.draws(), uint64_t{blur::kMaxBernoulliExpTerms});
}

// Draws of 0 accept U = 0 and then make every Bernoulli(exp(-1)) succeed:
// V never stops growing, and the sampler must stop at its cap (V < 128).
TEST(ExactSampling, DiscreteLaplaceIterationCapFailsClosed) {
  ScriptedRandomForFaultInjection random(ScriptedRandomForFaultInjection::Mode::kAlwaysZero);
  int64_t z = 0;
  EXPECT_EQ(blur::sample_discrete_laplace(random, 10, 1, &z), Status::kIterationCap);
}

TEST(ExactSampling, RandomSourceFailurePropagates) {
  ScriptedRandomForFaultInjection random(ScriptedRandomForFaultInjection::Mode::kFail);
  bool b = false;
  EXPECT_EQ(blur::sample_bernoulli(random, 1, 2, &b), Status::kEntropyFailure);
  EXPECT_EQ(blur::sample_bernoulli_exp(random, 3, 2, &b), Status::kEntropyFailure);
}

}  // namespace
