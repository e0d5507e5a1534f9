#include <gtest/gtest.h>
#include <math.h>

#include "blur/mechanisms/binary_randomized_response.h"
#include "blur/mechanisms/generalized_randomized_response.h"
#include "blur/sampling/rng.h"
#include "scripted_random.h"
#include "sim_port.h"
#include "stats.h"

namespace {

using blur::BinaryRandomizedResponse;
using blur::GeneralizedRandomizedResponse;
using blur::Status;

TEST(RandomizedResponse, BuildersValidateAndChargeTheExactEpsilon) {
  EXPECT_EQ(BinaryRandomizedResponse::create(0).status(), Status::kInvalidArgument);
  EXPECT_EQ(BinaryRandomizedResponse::create(blur::kMaxReportEpsilonMicros + 1).status(),
            Status::kInvalidArgument);
  const auto rr = BinaryRandomizedResponse::create(1234567);
  ASSERT_TRUE(rr.ok());
  // Sampling uses exactly epsilon = 1234567 / 10^6, so that is the charge.
  EXPECT_EQ(rr.value().epsilon_charged(), 1234567u);
  EXPECT_EQ(rr.value().domain_size(), 2u);

  EXPECT_EQ(GeneralizedRandomizedResponse::create(1000000, 1).status(), Status::kInvalidArgument);
  EXPECT_EQ(GeneralizedRandomizedResponse::create(1000000, (1u << 16) + 1).status(),
            Status::kInvalidArgument);
  EXPECT_EQ(GeneralizedRandomizedResponse::create(0, 4).status(), Status::kInvalidArgument);
  const auto grr = GeneralizedRandomizedResponse::create(500000, 16);
  ASSERT_TRUE(grr.ok());
  EXPECT_EQ(grr.value().epsilon_charged(), 500000u);
  EXPECT_EQ(grr.value().domain_size(), 16u);
  blur_test::ScriptedRandomForFaultInjection random(
      blur_test::ScriptedRandomForFaultInjection::Mode::kAlwaysZero);
  uint32_t out = 0;
  EXPECT_EQ(grr.value().randomize(random, 16, &out), Status::kInvalidArgument);
}

// Binary: P(report = truth) must be e^eps / (1 + e^eps) for both true
// values. False-alarm rate 1e-6 per check; each sample also rejects
// marginals off by 0.01 (the "keeps the true bit too often" class of bug).
TEST(RandomizedResponse, BinaryMarginalsMatchTheMechanism) {
  blur::sim::SimPort port(21);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const uint64_t n = 200000;
  for (uint32_t epsilon_micros : {250000u, 1000000u, 3000000u}) {
    const auto rr = BinaryRandomizedResponse::create(epsilon_micros);
    ASSERT_TRUE(rr.ok());
    const double e = exp(epsilon_micros / 1e6);
    const double p_keep = e / (1 + e);
    for (uint32_t truth : {0u, 1u}) {
      uint64_t kept = 0;
      for (uint64_t i = 0; i < n; ++i) {
        uint32_t out = 0;
        ASSERT_EQ(rr.value().randomize(rng, truth, &out), Status::kOk);
        kept += out == truth;
      }
      EXPECT_LT(fabs(blur_test::binomial_z(kept, n, p_keep)), blur_test::kZ1e6)
          << "epsilon_micros " << epsilon_micros << " truth " << truth;
      EXPECT_GT(fabs(blur_test::binomial_z(kept, n, p_keep + 0.01)), blur_test::kZ1e6);
      EXPECT_GT(fabs(blur_test::binomial_z(kept, n, p_keep - 0.01)), blur_test::kZ1e6);
    }
  }
}

// k-ary: the whole output distribution for a fixed input against the exact
// pmf (chi-square, false-alarm rate 1e-6 per case), and each sample also
// rejects a mechanism whose p is off by 0.01 (mass moved from one other
// value to the truth).
TEST(RandomizedResponse, GeneralizedOutputDistributionIsExact) {
  blur::sim::SimPort port(22);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const uint64_t n = 100000;
  const struct {
    uint32_t epsilon_micros, domain, truth;
  } cases[] = {
      {500000, 2, 1}, {1000000, 5, 3}, {2000000, 16, 0}, {4000000, 16, 15}, {1000000, 64, 7}};
  for (const auto& c : cases) {
    const auto grr = GeneralizedRandomizedResponse::create(c.epsilon_micros, c.domain);
    ASSERT_TRUE(grr.ok());
    static uint64_t counts[64];
    static double pmf[64], wrong[64];
    for (uint32_t v = 0; v < c.domain; ++v) counts[v] = 0;
    for (uint64_t i = 0; i < n; ++i) {
      uint32_t out = 0;
      ASSERT_EQ(grr.value().randomize(rng, c.truth, &out), Status::kOk);
      ASSERT_LT(out, c.domain);
      ++counts[out];
    }
    const double e = exp(c.epsilon_micros / 1e6);
    for (uint32_t v = 0; v < c.domain; ++v) {
      pmf[v] = (v == c.truth ? e : 1.0) / (e + c.domain - 1);
      wrong[v] = pmf[v];
    }
    wrong[c.truth] += 0.01;
    wrong[(c.truth + 1) % c.domain] -= 0.01;
    const int df = static_cast<int>(c.domain) - 1;
    const double critical = blur_test::chi_square_critical_1e6(df);
    EXPECT_LT(blur_test::chi_square(counts, pmf, static_cast<int>(c.domain), n), critical)
        << "domain " << c.domain << " epsilon_micros " << c.epsilon_micros;
    EXPECT_GT(blur_test::chi_square(counts, wrong, static_cast<int>(c.domain), n), critical);
  }
}

// Empirical privacy audit: for inputs a != b, ln(P(out = a | a) / P(out = a | b))
// must equal the charged epsilon (it is the largest output-probability ratio
// of this mechanism). Checked within 5 standard errors of the log-ratio
// (delta method; false-alarm rate 6e-7 per case).
TEST(RandomizedResponse, PrivacyLossMatchesTheCharge) {
  blur::sim::SimPort port(23);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const uint64_t n = 200000;
  for (uint32_t epsilon_micros : {500000u, 2000000u}) {
    const auto grr = GeneralizedRandomizedResponse::create(epsilon_micros, 8);
    ASSERT_TRUE(grr.ok());
    uint64_t hits_a = 0, hits_b = 0;
    for (uint64_t i = 0; i < n; ++i) {
      uint32_t out = 0;
      ASSERT_EQ(grr.value().randomize(rng, 2, &out), Status::kOk);
      hits_a += out == 2;
      ASSERT_EQ(grr.value().randomize(rng, 5, &out), Status::kOk);
      hits_b += out == 2;
    }
    const double pa = static_cast<double>(hits_a) / n, pb = static_cast<double>(hits_b) / n;
    const double se = sqrt((1 - pa) / (n * pa) + (1 - pb) / (n * pb));
    const double epsilon = grr.value().epsilon_charged() / 1e6;
    EXPECT_LT(fabs(log(pa / pb) - epsilon), 5 * se) << "epsilon_micros " << epsilon_micros;
  }
}

// With every draw at its maximum, the proposal is never the truth 0 and,
// for epsilon >= 1, never accepted: the sampler must stop at its cap.
TEST(RandomizedResponse, IterationCapFailsClosed) {
  using blur_test::ScriptedRandomForFaultInjection;
  ScriptedRandomForFaultInjection random(ScriptedRandomForFaultInjection::Mode::kAlwaysMax);
  const auto rr = BinaryRandomizedResponse::create(2000000);
  ASSERT_TRUE(rr.ok());
  uint32_t out = 0;
  EXPECT_EQ(rr.value().randomize(random, 0, &out), Status::kIterationCap);
  ScriptedRandomForFaultInjection failing(ScriptedRandomForFaultInjection::Mode::kFail);
  EXPECT_EQ(rr.value().randomize(failing, 1, &out), Status::kEntropyFailure);
}

}  // namespace
