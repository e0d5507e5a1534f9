#include "blur/mechanisms/unary_encoding.h"

#include <gtest/gtest.h>
#include <math.h>

#include "blur/sampling/rng.h"
#include "sim_port.h"
#include "stats.h"

namespace {

using blur::Status;
using blur::UnaryEncoding;

bool bit(const uint8_t* bits, uint32_t v) { return (bits[v / 8] >> (v % 8)) & 1; }

TEST(UnaryEncoding, BuilderValidates) {
  using Kind = UnaryEncoding::Kind;
  EXPECT_EQ(UnaryEncoding::create(Kind::kOptimized, 0, 16).status(), Status::kInvalidArgument);
  EXPECT_EQ(UnaryEncoding::create(Kind::kOptimized, 1000000, 1).status(), Status::kInvalidArgument);
  EXPECT_EQ(UnaryEncoding::create(Kind::kSymmetric, 1000000, 4097).status(),
            Status::kInvalidArgument);
  const auto oue = UnaryEncoding::create(Kind::kOptimized, 1500000, 4096);
  ASSERT_TRUE(oue.ok());
  EXPECT_EQ(oue.value().epsilon_charged(), 1500000u);
  EXPECT_EQ(oue.value().payload_bytes(), 512u);
  EXPECT_EQ(oue.value().id(), blur::MechanismId::kOptimizedUnaryEncoding);
}

// Per-bit marginals: the true bit is 1 with probability p, every other bit
// with q (each checked separately; false-alarm rate 1e-6 per check). Each
// sample also rejects the peer bug "true bit kept with p + (1 - p) q" and a
// q off by 0.01 (pooled over the other bits).
TEST(UnaryEncoding, PerBitMarginalsAreExactlyPAndQ) {
  blur::sim::SimPort port(31);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const uint32_t domain = 13, truth = 5;
  // The peer bug moves the true bit by (1 - p) q: at least 0.038 here (OUE,
  // eps = 2.5), over 10 standard errors at this n, so it is always caught.
  const uint64_t n = 20000;
  for (auto kind : {UnaryEncoding::Kind::kSymmetric, UnaryEncoding::Kind::kOptimized}) {
    for (uint32_t epsilon_micros : {1000000u, 2500000u}) {
      const auto ue = UnaryEncoding::create(kind, epsilon_micros, domain);
      ASSERT_TRUE(ue.ok());
      const double e = exp(epsilon_micros / 1e6);
      const double p = kind == UnaryEncoding::Kind::kSymmetric ? sqrt(e) / (sqrt(e) + 1) : 0.5;
      const double q = kind == UnaryEncoding::Kind::kSymmetric ? 1 / (sqrt(e) + 1) : 1 / (e + 1);
      uint64_t ones[domain] = {};
      uint8_t bits[2];
      for (uint64_t i = 0; i < n; ++i) {
        ASSERT_EQ(ue.value().randomize(rng, truth, bits), Status::kOk);
        ASSERT_EQ(bits[1] >> 5, 0);  // no bits past the domain
        for (uint32_t v = 0; v < domain; ++v) ones[v] += bit(bits, v);
      }
      uint64_t others = 0;
      for (uint32_t v = 0; v < domain; ++v) {
        const double expected = v == truth ? p : q;
        EXPECT_LT(fabs(blur_test::binomial_z(ones[v], n, expected)), blur_test::kZ1e6)
            << "bit " << v << " epsilon_micros " << epsilon_micros;
        if (v != truth) others += ones[v];
      }
      EXPECT_GT(fabs(blur_test::binomial_z(ones[truth], n, p + (1 - p) * q)), blur_test::kZ1e6);
      const uint64_t other_trials = n * (domain - 1);
      EXPECT_GT(fabs(blur_test::binomial_z(others, other_trials, q + 0.01)), blur_test::kZ1e6);
      EXPECT_GT(fabs(blur_test::binomial_z(others, other_trials, q - 0.01)), blur_test::kZ1e6);
    }
  }
}

// Empirical privacy loss: ln(p (1 - q) / ((1 - p) q)) from the observed
// marginals equals the charged epsilon within 5 standard errors (delta
// method; false-alarm rate 6e-7 per case).
TEST(UnaryEncoding, PrivacyLossMatchesTheCharge) {
  blur::sim::SimPort port(32);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const uint64_t n = 40000;
  for (auto kind : {UnaryEncoding::Kind::kSymmetric, UnaryEncoding::Kind::kOptimized}) {
    const auto ue = UnaryEncoding::create(kind, 2000000, 4);
    ASSERT_TRUE(ue.ok());
    uint64_t true_ones = 0, other_ones = 0;
    uint8_t bits[1];
    for (uint64_t i = 0; i < n; ++i) {
      ASSERT_EQ(ue.value().randomize(rng, 0, bits), Status::kOk);
      true_ones += bit(bits, 0);
      other_ones += bit(bits, 1) + bit(bits, 2) + bit(bits, 3);
    }
    const double p = static_cast<double>(true_ones) / n;
    const double q = static_cast<double>(other_ones) / (3.0 * n);
    const double loss = log(p * (1 - q) / ((1 - p) * q));
    const double se = sqrt(1 / (n * p * (1 - p)) + 1 / (3.0 * n * q * (1 - q)));
    EXPECT_LT(fabs(loss - ue.value().epsilon_charged() / 1e6), 5 * se);
  }
}

}  // namespace
