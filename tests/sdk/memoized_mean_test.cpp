// Numeric values reported repeatedly: alpha-point rounding + a memoized
// 1BitMean bit + per-report output perturbation (memoized_mean.h), its
// per-report charge and the Client's refusals.
#include "blur/mechanisms/memoized_mean.h"

#include <gtest/gtest.h>
#include <math.h>
#include <string.h>

#include "blur/compat/std_facilities.h"

#include "blur/client.h"
#include "sim_port.h"
#include "stats.h"

namespace {

using blur::MemoizedMean;
using blur::Status;

constexpr uint64_t kNat = blur::kEpsilonMicrosPerNat;

void device_secret(uint64_t device, uint8_t secret[32]) {
  memset(secret, 0, 32);
  memcpy(secret, &device, sizeof device);
  secret[31] = 0x5a;
}

TEST(MemoizedMean, BuilderValidates) {
  const blur::MemoKey key{7, 1};
  EXPECT_TRUE(MemoizedMean::create(kNat, kNat, 101, 4, key).ok());  // width 25
  EXPECT_EQ(MemoizedMean::create(kNat, kNat, 101, 4, key).value().bucket_width(), 25u);
  EXPECT_EQ(MemoizedMean::create(kNat, kNat, 101, 3, key).status(),
            Status::kInvalidArgument);  // 3 !| 100
  EXPECT_EQ(MemoizedMean::create(kNat, kNat, 101, 0, key).status(), Status::kInvalidArgument);
  EXPECT_EQ(MemoizedMean::create(kNat, kNat, 101, 101, key).status(), Status::kInvalidArgument);
  EXPECT_EQ(MemoizedMean::create(kNat, 0, 101, 4, key).status(), Status::kInvalidArgument);
  EXPECT_EQ(MemoizedMean::create(0, kNat, 101, 4, key).status(), Status::kInvalidArgument);
}

// Over devices (independent secrets) a value rounds up with probability
// r / w exactly, so the rounded mean is the true mean; one device always
// rounds a value the same way and always sends the same bit for a point.
// z-tests at a 1e-6 false-alarm rate each; a round-to-nearest or
// always-down rule fails the first (P(up) would be 0 or 1, not 12/25).
TEST(MemoizedMean, RoundingIsUnbiasedOverDevicesAndFixedPerDevice) {
  const auto mean = MemoizedMean::create(kNat, kNat, 101, 4, {7, 1});
  ASSERT_TRUE(mean.ok());
#ifdef BLUR_TEST_SMALL_SCENARIOS
  const uint64_t n = 10000;  // QEMU: the wrong-mechanism check still sits at z ~ 11
#else
  const uint64_t n = 40000;
#endif
  uint64_t up = 0, ones = 0;
  for (uint64_t device = 0; device < n; ++device) {
    uint8_t secret[32];
    device_secret(device, secret);
    uint32_t point = 0, again = 0;
    ASSERT_EQ(mean.value().round(secret, 37, &point), Status::kOk);  // 37 = 25 + 12
    ASSERT_TRUE(point == 25 || point == 50) << point;
    ASSERT_EQ(mean.value().round(secret, 37, &again), Status::kOk);
    ASSERT_EQ(point, again);
    up += point == 50;
    uint32_t bit = 0, bit_again = 0;
    ASSERT_EQ(mean.value().memoized_bit(secret, point, &bit), Status::kOk);
    ASSERT_EQ(mean.value().memoized_bit(secret, point, &bit_again), Status::kOk);
    ASSERT_EQ(bit, bit_again);  // memoized
    ones += bit;
  }
  EXPECT_LT(fabs(blur_test::binomial_z(up, n, 12.0 / 25)), blur_test::kZ1e6);
  // The bits: 1BitMean of the mean point, P(1) = 1/(e+1) + (37/100)(e-1)/(e+1).
  const double e = exp(1.0);
  const double p_one = 1 / (e + 1) + 0.37 * (e - 1) / (e + 1);
  EXPECT_LT(fabs(blur_test::binomial_z(ones, n, p_one)), blur_test::kZ1e6);
  // Without rounding up (always L = 25) the bits would centre on 0.25.
  EXPECT_GT(fabs(blur_test::binomial_z(ones, n, 1 / (e + 1) + 0.25 * (e - 1) / (e + 1))),
            blur_test::kZ1e6);
  // Exact multiples of the width never move.
  uint8_t secret[32];
  device_secret(3, secret);
  for (uint32_t v = 0; v <= 100; v += 25) {
    uint32_t point = 0;
    ASSERT_EQ(mean.value().round(secret, v, &point), Status::kOk);
    EXPECT_EQ(point, v);
  }
  uint32_t bit = 0;
  EXPECT_EQ(mean.value().memoized_bit(secret, 30, &bit), Status::kInvalidArgument);  // no point
  EXPECT_EQ(mean.value().round(nullptr, 30, &bit), Status::kInvalidArgument);
}

// The ledger: the report epsilon every report, whatever the value or its
// rounding point (nothing depends on which points were seen); the
// configuration is pinned across reboots.
TEST(MemoizedMean, ChargesTheReportEpsilonEveryReport) {
  blur::sim::SimPort port(91);
  static blur::Client client;
  new (&client) blur::Client();
  ASSERT_EQ(client.open(port.port()), Status::kNotProvisioned);
  blur::LedgerPolicy policy;
  policy.lifetime_cap_micros = 100 * kNat;
  ASSERT_EQ(client.provision(policy), Status::kOk);
  EXPECT_EQ(client.add_metric(1, blur::MechanismId::kOneBitMean, kNat, 101, kNat, 3),
            Status::kInvalidArgument);  // 3 does not divide 100
  ASSERT_EQ(client.add_metric(1, blur::MechanismId::kOneBitMean, kNat / 2, 101, 2 * kNat, 4),
            Status::kOk);
  for (int i = 0; i < 8; ++i) ASSERT_EQ(client.record(1, 40), Status::kOk);
  EXPECT_EQ(client.ledger().spent_micros(), 4 * kNat);
  static uint8_t batch[8192];
  size_t written = 0, count = 0;
  uint64_t token = 0;
  ASSERT_EQ(client.pending_batch(batch, sizeof batch, &written, &count, &token), Status::kOk);
  EXPECT_EQ(count, 8u);
  ASSERT_EQ(client.acknowledge(token), Status::kOk);
  for (uint32_t v : {0u, 12u, 25u, 37u, 50u, 62u, 75u, 88u, 100u}) {
    ASSERT_EQ(client.record(1, v), Status::kOk);
  }
  EXPECT_EQ(client.ledger().spent_micros(), 4 * kNat + 9 * kNat / 2);
  EXPECT_EQ(client.queue().pending_count(), 9u);

  static blur::Client rebooted;
  new (&rebooted) blur::Client();
  ASSERT_EQ(rebooted.open(port.port()), Status::kOk);
  EXPECT_EQ(rebooted.add_metric(1, blur::MechanismId::kOneBitMean, kNat / 2, 101, 2 * kNat, 5),
            Status::kConfigurationChanged);  // other rounding buckets: other streams
  ASSERT_EQ(rebooted.add_metric(1, blur::MechanismId::kOneBitMean, kNat / 2, 101, 2 * kNat, 4),
            Status::kOk);
  ASSERT_EQ(rebooted.record(1, 63), Status::kOk);
  EXPECT_EQ(rebooted.ledger().spent_micros(), 9 * kNat);
}

}  // namespace
