#include "blur/sampling/dyadic_bernoulli.h"

#include <gtest/gtest.h>
#include <math.h>

#include "blur/sampling/rng.h"
#include "scripted_random.h"
#include "sim_port.h"
#include "stats.h"

namespace {

using blur::Status;
using blur_test::ScriptedRandomForFaultInjection;

constexpr double kTwo64 = 18446744073709551616.0;

// ln((2^64 - m) / m), the per-bit log-likelihood ratio of flipping with m / 2^64.
double realized_log_ratio(uint64_t m) {
  return log((kTwo64 - static_cast<double>(m)) / static_cast<double>(m));
}

static_assert(blur::flip_numerator(0, 1) == uint64_t{1} << 63, "x = 0 flips with 1/2");
static_assert(blur::flip_numerator(22, 1) == 0, "x > 21 is refused");
static_assert(blur::flip_numerator(1, 0) == 0, "zero denominator is refused");

// The realized loss ln((1 - q) / q) never exceeds x and is within 1e-9 nats
// of it (so x in micro-nats is the realized loss rounded up), for x from a
// micro-nat to 21 nats, with the denominators the mechanisms use. Double
// precision resolves ln to ~1e-15 here: the 1e-9 margin is not a rounding
// artefact. m is also the smallest such numerator: m - 1 would exceed x.
TEST(FlipNumerator, RealizesTheLogRatioRoundedDown) {
  const uint64_t denominators[] = {1000000, 2000000, 4000000, 16000000};
  const uint64_t numerators[] = {1,        1000,     250000,   500000,  693147,  1000000,
                                 1500000,  2000000,  3141592,  4000000, 8000000, 10000000,
                                 16000000, 20000000, 20999999, 21000000};
  for (uint64_t d : denominators) {
    for (uint64_t n : numerators) {
      const double x = static_cast<double>(n) / static_cast<double>(d);
      const uint64_t m = blur::flip_numerator(n, d);
      ASSERT_GT(m, 0u);
      const double realized = realized_log_ratio(m);
      EXPECT_LE(realized, x + 1e-12) << n << "/" << d;
      EXPECT_GT(realized, x - 1e-9) << n << "/" << d;
      // With m - 1 the ratio grows by about 1/m relative, beyond e^x.
      EXPECT_GT(realized_log_ratio(m - 1) - x, -1e-12) << n << "/" << d;
    }
  }
}

TEST(FlipNumerator, MatchesTheClosedFormOfQ) {
  for (double x : {0.25, 0.5, 1.0, 2.0, 4.0}) {
    const uint64_t m = blur::flip_numerator(static_cast<uint64_t>(x * 1e6), 1000000);
    EXPECT_LT(fabs(static_cast<double>(m) / kTwo64 - 1 / (exp(x) + 1)), 1e-15) << x;
  }
}

// Every bit is flipped with probability m / 2^64, independently of its
// position and of the bits' content; bits past bit_count are untouched.
// Checks: per-position marginals pooled by lane (64 z-tests) and the total,
// each at a false-alarm rate of 1e-6; a q off by 0.01 (over 15 standard errors) is rejected.
TEST(FlipBits, MarginalsAreExactlyQ) {
  blur::sim::SimPort port(41);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const uint64_t n = 8000;
  const size_t bit_count = 75;  // a whole word, then 11 bits of the next
  for (uint64_t m : {blur::flip_numerator(1000000, 1000000), blur::flip_numerator(1, 2),
                     uint64_t{0x0123456789ABCDEF}, uint64_t{1}}) {
    const double q = static_cast<double>(m) / kTwo64;
    uint64_t flips_by_lane[64] = {};
    uint64_t total = 0;
    for (uint64_t i = 0; i < n; ++i) {
      uint8_t bits[10] = {0xFF, 0, 0xA5, 0x5A, 0, 0, 0, 0xFF, 0x00, 0xF0};
      const uint8_t before[10] = {0xFF, 0, 0xA5, 0x5A, 0, 0, 0, 0xFF, 0x00, 0xF0};
      ASSERT_EQ(blur::flip_bits(rng, m, bits, bit_count), Status::kOk);
      ASSERT_EQ(bits[9] & 0xF8, before[9] & 0xF8);  // bits 75.. untouched
      for (size_t b = 0; b < bit_count; ++b) {
        const int flipped = ((bits[b / 8] ^ before[b / 8]) >> (b % 8)) & 1;
        flips_by_lane[b % 64] += flipped;
        total += flipped;
      }
    }
    for (size_t lane = 0; lane < 64; ++lane) {
      const uint64_t trials = n * (lane < bit_count - 64 ? 2 : 1);
      EXPECT_LT(fabs(blur_test::binomial_z(flips_by_lane[lane], trials, q)), blur_test::kZ1e6)
          << "lane " << lane << " m " << m;
    }
    EXPECT_LT(fabs(blur_test::binomial_z(total, n * bit_count, q)), blur_test::kZ1e6);
    if (q > 0.01) {
      EXPECT_GT(fabs(blur_test::binomial_z(total, n * bit_count, q + 0.01)), blur_test::kZ1e6);
      EXPECT_GT(fabs(blur_test::binomial_z(total, n * bit_count, q - 0.01)), blur_test::kZ1e6);
    }
  }
}

// Coins of the same word are independent: the joint frequency of two
// lanes both flipping is q^2 (z-test, false-alarm rate 1e-6 per pair).
TEST(FlipBits, LanesAreIndependent) {
  blur::sim::SimPort port(42);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const uint64_t m = blur::flip_numerator(500000, 1000000);
  const double q = static_cast<double>(m) / kTwo64;
  const uint64_t n = 40000;
  uint64_t both_0_1 = 0, both_0_63 = 0, both_31_32 = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint8_t bits[8] = {};
    ASSERT_EQ(blur::flip_bits(rng, m, bits, 64), Status::kOk);
    auto bit = [&](int b) { return (bits[b / 8] >> (b % 8)) & 1; };
    both_0_1 += bit(0) & bit(1);
    both_0_63 += bit(0) & bit(63);
    both_31_32 += bit(31) & bit(32);
  }
  for (uint64_t count : {both_0_1, both_0_63, both_31_32}) {
    EXPECT_LT(fabs(blur_test::binomial_z(count, n, q * q)), blur_test::kZ1e6);
  }
}

// U = 0 is below every q (all flip); U = 1 - 2^-64 is above (none flip);
// an entropy failure is passed on.
TEST(FlipBits, EdgesAndFailures) {
  uint8_t bits[3] = {0x0F, 0xF0, 0x01};
  ScriptedRandomForFaultInjection zeros(ScriptedRandomForFaultInjection::Mode::kAlwaysZero);
  ASSERT_EQ(blur::flip_bits(zeros, 1, bits, 17), Status::kOk);
  EXPECT_EQ(bits[0], 0xF0);
  EXPECT_EQ(bits[1], 0x0F);
  EXPECT_EQ(bits[2], 0x00);
  ScriptedRandomForFaultInjection ones(ScriptedRandomForFaultInjection::Mode::kAlwaysMax);
  ASSERT_EQ(blur::flip_bits(ones, uint64_t{1} << 63, bits, 17), Status::kOk);
  EXPECT_EQ(bits[0], 0xF0);
  ScriptedRandomForFaultInjection failing(ScriptedRandomForFaultInjection::Mode::kFail);
  EXPECT_EQ(blur::flip_bits(failing, 1, bits, 17), Status::kEntropyFailure);
}

}  // namespace
