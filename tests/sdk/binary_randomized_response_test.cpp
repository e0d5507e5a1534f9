#include "blur/binary_randomized_response.h"

#include <gtest/gtest.h>
#include <math.h>

#include "blur/rng.h"
#include "scripted_random.h"
#include "sim_port.h"
#include "stats.h"

namespace {

using blur::BinaryRandomizedResponse;
using blur::Status;

TEST(BinaryRandomizedResponse, BuilderValidatesEpsilon) {
  EXPECT_EQ(BinaryRandomizedResponse::create(0).status(), Status::kInvalidArgument);
  EXPECT_EQ(BinaryRandomizedResponse::create(blur::kMaxReportEpsilonMicros + 1).status(),
            Status::kInvalidArgument);
  const auto rr = BinaryRandomizedResponse::create(1234567);
  ASSERT_TRUE(rr.ok());
  // Sampling uses exactly epsilon = 1234567 / 10^6, so that is the charge.
  EXPECT_EQ(rr.value().epsilon_charged(), 1234567u);
}

// P(report = truth) must be e^eps / (1 + e^eps) for both true values; the
// log-ratio of the two marginals is the realized privacy loss. False-alarm
// rate 1e-6 per check; each sample also rejects marginals off by 0.01
// (the "keeps the true bit too often" class of bug).
TEST(BinaryRandomizedResponse, MarginalsMatchTheMechanism) {
  blur::sim::SimPort port(21);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const uint64_t n = 200000;
  for (uint32_t epsilon_micros : {250000u, 1000000u, 3000000u}) {
    const auto rr = BinaryRandomizedResponse::create(epsilon_micros);
    ASSERT_TRUE(rr.ok());
    const double e = exp(epsilon_micros / 1e6);
    const double p_keep = e / (1 + e);
    for (bool truth : {false, true}) {
      uint64_t kept = 0;
      for (uint64_t i = 0; i < n; ++i) {
        bool out = false;
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

// With every draw at its maximum, no round keeps (Bern(1/2) fails) and for
// epsilon >= 1 no round flips: the mechanism must stop at its cap.
TEST(BinaryRandomizedResponse, IterationCapFailsClosed) {
  using blur_test::ScriptedRandomForFaultInjection;
  ScriptedRandomForFaultInjection random(ScriptedRandomForFaultInjection::Mode::kAlwaysMax);
  const auto rr = BinaryRandomizedResponse::create(2000000);
  ASSERT_TRUE(rr.ok());
  bool out = false;
  EXPECT_EQ(rr.value().randomize(random, true, &out), Status::kIterationCap);
  ScriptedRandomForFaultInjection failing(ScriptedRandomForFaultInjection::Mode::kFail);
  EXPECT_EQ(rr.value().randomize(failing, true, &out), Status::kEntropyFailure);
}

}  // namespace
