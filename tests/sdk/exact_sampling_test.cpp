#include "blur/exact_sampling.h"

#include <gtest/gtest.h>
#include <math.h>

#include "blur/rng.h"
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

TEST(ExactSampling, RejectsInvalidParameters) {
  ScriptedRandomForFaultInjection random(ScriptedRandomForFaultInjection::Mode::kAlwaysZero);
  bool b = false;
  EXPECT_EQ(blur::sample_bernoulli(random, 1, 0, &b), Status::kInvalidArgument);
  EXPECT_EQ(blur::sample_bernoulli(random, 3, 2, &b), Status::kInvalidArgument);
  EXPECT_EQ(blur::sample_bernoulli_exp(random, 1, 0, &b), Status::kInvalidArgument);
  EXPECT_EQ(blur::sample_bernoulli_exp_at_most_one(random, 2, 1, &b), Status::kInvalidArgument);
  EXPECT_EQ(blur::sample_bernoulli_exp_at_most_one(random, 1, UINT64_MAX / 2, &b),
            Status::kInvalidArgument);
  EXPECT_EQ(random.draws(), 0u);
}

// Draws of 0 make every Bern(n/(dk)) succeed: the series never ends, and the
// sampler must stop at its cap with no output.
TEST(ExactSampling, IterationCapFailsClosed) {
  ScriptedRandomForFaultInjection random(ScriptedRandomForFaultInjection::Mode::kAlwaysZero);
  bool b = true;
  EXPECT_EQ(blur::sample_bernoulli_exp(random, 1, 2, &b), Status::kIterationCap);
  EXPECT_EQ(random.draws(), uint64_t{blur::kMaxBernoulliExpTerms});
}

TEST(ExactSampling, RandomSourceFailurePropagates) {
  ScriptedRandomForFaultInjection random(ScriptedRandomForFaultInjection::Mode::kFail);
  bool b = false;
  EXPECT_EQ(blur::sample_bernoulli(random, 1, 2, &b), Status::kEntropyFailure);
  EXPECT_EQ(blur::sample_bernoulli_exp(random, 3, 2, &b), Status::kEntropyFailure);
}

}  // namespace
