// Longitudinal privacy: HMAC-SHA256, the permanent-response stream, the
// memoized (PRR + IRR) mechanisms and the ledger's once-per-value charge.
#include "blur/mechanisms/memoized.h"

#include <gtest/gtest.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blur/sampling/hmac_sha256.h"
#include "blur/mechanisms/permanent_stream.h"
#include "blur/mechanisms/rappor.h"
#include "blur/mechanisms/unary_encoding.h"
#include "kat_hmac_sha256.inc"  // kKatHmacSha256
#include "sim_port.h"
#include "stats.h"

namespace {

using blur::Status;

constexpr double kTwo64 = 18446744073709551616.0;
constexpr uint64_t kNat = blur::kEpsilonMicrosPerNat;

size_t from_hex(const char* hex, size_t length, uint8_t* out) {
  for (size_t i = 0; i + 1 < length; i += 2) {
    char byte[3] = {hex[i], hex[i + 1], 0};
    out[i / 2] = static_cast<uint8_t>(strtoul(byte, nullptr, 16));
  }
  return length / 2;
}

// RFC 4231 test cases (tests/vectors/hmac_sha256.kat), keys shorter and
// longer than a block.
TEST(HmacSha256, Rfc4231KnownAnswers) {
  size_t vectors = 0;
  for (const char* line = kKatHmacSha256; *line != '\0';) {
    const char* end = strchr(line, '\n');
    const size_t length = end ? static_cast<size_t>(end - line) : strlen(line);
    if (length > 0 && line[0] != '#') {
      const char* key_end = strchr(line, ' ');
      const char* data_end = strchr(key_end + 1, ' ');
      static uint8_t key[256], data[256], mac[32];
      const size_t key_length = from_hex(line, static_cast<size_t>(key_end - line), key);
      const size_t data_length =
          from_hex(key_end + 1, static_cast<size_t>(data_end - key_end - 1), data);
      from_hex(data_end + 1, 64, mac);
      uint8_t out[32];
      // Split the message in two parts (the API's second part): same MAC.
      const size_t split = data_length / 3;
      ASSERT_EQ(
          blur::hmac_sha256(key, key_length, data, split, data + split, data_length - split, out),
          Status::kOk);
      EXPECT_EQ(memcmp(out, mac, 32), 0) << "vector " << vectors;
      ++vectors;
    }
    line += length + (end ? 1 : 0);
  }
  EXPECT_EQ(vectors, 6u);
}

TEST(PermanentStream, DeterministicPerSecretMetricAndValue) {
  uint8_t secret[32], other_secret[32];
  for (int i = 0; i < 32; ++i) secret[i] = static_cast<uint8_t>(i), other_secret[i] = 7;
  uint8_t a[100], b[100], c[100], d[100], e[100];
  blur::PermanentStream s1(secret, 3, 9), s2(secret, 3, 9), s3(secret, 4, 9), s4(secret, 3, 10),
      s5(other_secret, 3, 9);
  ASSERT_EQ(s1.fill(a, 37), Status::kOk);  // split reads give the same bytes
  ASSERT_EQ(s1.fill(a + 37, 63), Status::kOk);
  ASSERT_EQ(s2.fill(b, 100), Status::kOk);
  ASSERT_EQ(s3.fill(c, 100), Status::kOk);
  ASSERT_EQ(s4.fill(d, 100), Status::kOk);
  ASSERT_EQ(s5.fill(e, 100), Status::kOk);
  EXPECT_EQ(memcmp(a, b, 100), 0);
  EXPECT_NE(memcmp(a, c, 100), 0);
  EXPECT_NE(memcmp(a, d, 100), 0);
  EXPECT_NE(memcmp(a, e, 100), 0);
  blur::PermanentStream no_secret(nullptr, 3, 9);
  EXPECT_EQ(no_secret.fill(a, 1), Status::kInvalidArgument);
}

// q* = q1 + q2 (1 - 2 q1) reaches the report epsilon's q, minimally: the
// one-report loss ln((1 - q*)/q*) is <= x and within 1e-9 nats of it.
TEST(Memoized, InstantaneousFlipRealizesTheReportEpsilon) {
  for (double longitudinal : {1.0, 4.0, 8.0}) {
    for (double report : {0.25, 0.5, 1.0}) {
      if (report > longitudinal) continue;
      const uint64_t m1 = blur::flip_numerator(static_cast<uint64_t>(longitudinal * 1e6), 1000000);
      const uint64_t mt = blur::flip_numerator(static_cast<uint64_t>(report * 1e6), 1000000);
      const uint64_t m2 = blur::instantaneous_flip_numerator(m1, mt);
      const double q1 = m1 / kTwo64, q2 = m2 / kTwo64;
      const double composite = q1 + q2 * (1 - 2 * q1);
      const double loss = log((1 - composite) / composite);
      EXPECT_LE(loss, report + 1e-12);
      EXPECT_GT(loss, report - 1e-9);
      if (m2 > 0) {
        const double smaller = q1 + (m2 - 1) / kTwo64 * (1 - 2 * q1);
        EXPECT_GT(log((1 - smaller) / smaller), report - 1e-9);  // no slack beyond rounding
      }
    }
  }
  EXPECT_EQ(blur::instantaneous_flip_numerator(100, 50), 0u);
}

// Across devices (secrets), one memoized SUE report flips each bit with
// q*: the true bit is 1 with 1 - q*, the others with q* (z-tests at 1e-6;
// q* differs from both the permanent q1 and the instantaneous q2 by far
// more than the tolerance, so a report built from either alone fails).
TEST(Memoized, OneReportIsTheMechanismAtTheReportEpsilon) {
  blur::sim::SimPort port(61);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const auto sue = blur::UnaryEncoding::create(blur::UnaryEncoding::Kind::kSymmetric, 4 * kNat, 8);
  ASSERT_TRUE(sue.ok());
  const auto memo = blur::Memoized<blur::UnaryEncoding>::create(sue.value(), kNat);
  ASSERT_TRUE(memo.ok());
  const double q =
      blur::UnaryEncoding::flip_numerator(blur::UnaryEncoding::Kind::kSymmetric, kNat) / kTwo64;
  const uint64_t n = 20000;
  uint64_t true_ones = 0, other_ones = 0;
  for (uint64_t device = 0; device < n; ++device) {
    uint8_t secret[32] = {};
    memcpy(secret, &device, sizeof device);
    secret[31] = 1;
    uint8_t bits[1];
    ASSERT_EQ(memo.value().randomize(rng, secret, 5, 3, nullptr, bits), Status::kOk);
    for (int b = 0; b < 8; ++b) ((b == 3) ? true_ones : other_ones) += (bits[0] >> b) & 1;
  }
  EXPECT_LT(fabs(blur_test::binomial_z(true_ones, n, 1 - q)), blur_test::kZ1e6);
  EXPECT_LT(fabs(blur_test::binomial_z(other_ones, 7 * n, q)), blur_test::kZ1e6);
  const double q1 = sue.value().flip_numerator_at(4 * kNat) / kTwo64;
  EXPECT_GT(fabs(blur_test::binomial_z(other_ones, 7 * n, q1)), blur_test::kZ1e6);
}

// One device reporting the same value many times: the reports average to
// its permanent response, never to the truth. With the report epsilon equal
// to the longitudinal one, every report is the permanent response itself.
TEST(Memoized, RepeatedReportsRevealOnlyThePermanentResponse) {
  blur::sim::SimPort port(62);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const auto rappor =
      blur::Rappor::create(2 * kNat, 64, blur::RapporShape{32, 1, 4}, blur::BloomHashKey{5, 0});
  ASSERT_TRUE(rappor.ok());
  uint8_t secret[32];
  for (int i = 0; i < 32; ++i) secret[i] = static_cast<uint8_t>(3 * i + 1);
  const auto same = blur::Memoized<blur::Rappor>::create(rappor.value(), 2 * kNat);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same.value().instantaneous_numerator(), 0u);
  uint8_t first[4], again[4];
  uint32_t cohort = 0, cohort_again = 0;
  ASSERT_EQ(same.value().randomize(rng, secret, 5, 17, &cohort, first), Status::kOk);
  for (int i = 0; i < 50; ++i) {
    ASSERT_EQ(same.value().randomize(rng, secret, 5, 17, &cohort_again, again), Status::kOk);
    ASSERT_EQ(memcmp(first, again, 4), 0);
    ASSERT_EQ(cohort, cohort_again);
  }
  // With instantaneous noise: bit frequencies over 4000 reports match
  // PRR_b (1 - q2) + (1 - PRR_b) q2 for every bit (z-tests at 1e-6).
  const auto noisy = blur::Memoized<blur::Rappor>::create(rappor.value(), kNat / 2);
  ASSERT_TRUE(noisy.ok());
  const double q2 = noisy.value().instantaneous_numerator() / kTwo64;
  const uint64_t n = 4000;
  uint64_t ones[32] = {};
  for (uint64_t i = 0; i < n; ++i) {
    ASSERT_EQ(noisy.value().randomize(rng, secret, 5, 17, &cohort_again, again), Status::kOk);
    EXPECT_EQ(cohort_again, cohort);
    for (int b = 0; b < 32; ++b) ones[b] += (again[b / 8] >> (b % 8)) & 1;
  }
  for (int b = 0; b < 32; ++b) {
    const int prr = (first[b / 8] >> (b % 8)) & 1;
    EXPECT_LT(fabs(blur_test::binomial_z(ones[b], n, prr ? 1 - q2 : q2)), blur_test::kZ1e6) << b;
  }
  EXPECT_EQ(blur::Memoized<blur::Rappor>::create(rappor.value(), 3 * kNat).status(),
            Status::kInvalidArgument);  // a report cannot be less private than the PRR
  const auto oue = blur::UnaryEncoding::create(blur::UnaryEncoding::Kind::kOptimized, kNat, 8);
  EXPECT_EQ(blur::Memoized<blur::UnaryEncoding>::create(oue.value(), kNat).status(),
            Status::kInvalidArgument);  // asymmetric flips
}

// The ledger charges the longitudinal epsilon once per (metric, value),
// the report epsilon every time, remembers it across reboots, and refuses
// a new value when its table is full.
TEST(Memoized, LedgerChargesTheLongitudinalEpsilonOncePerValue) {
  blur::sim::SimPort port(63);
  blur::Ledger ledger;
  blur::LedgerPolicy policy;
  policy.lifetime_cap_micros = 1000 * kNat;
  uint8_t secret[32];
  for (int i = 0; i < 32; ++i) secret[i] = static_cast<uint8_t>(i + 1);
  ASSERT_EQ(ledger.provision(port.port(), blur::sim::SimPort::kLedgerPartition, policy, 9, secret), Status::kOk);
  uint64_t id = 0;
  ASSERT_EQ(ledger.charge_memoized(kNat / 2, 4 * kNat, 5, 17, &id), Status::kOk);
  EXPECT_EQ(ledger.spent_micros(), 4 * kNat + kNat / 2);
  ASSERT_EQ(ledger.charge_memoized(kNat / 2, 4 * kNat, 5, 17, &id), Status::kOk);
  EXPECT_EQ(ledger.spent_micros(), 5 * kNat);
  blur::Ledger rebooted;
  ASSERT_EQ(rebooted.open(port.port(), blur::sim::SimPort::kLedgerPartition), Status::kOk);
  EXPECT_EQ(memcmp(rebooted.secret(), secret, 32), 0);
  EXPECT_TRUE(rebooted.memoized(5, 17));
  ASSERT_EQ(rebooted.charge_memoized(kNat / 2, 4 * kNat, 5, 17, &id), Status::kOk);
  EXPECT_EQ(rebooted.spent_micros(), 11 * kNat / 2);
  ASSERT_EQ(rebooted.charge_memoized(kNat / 2, 4 * kNat, 6, 17, &id), Status::kOk);  // new metric
  EXPECT_EQ(rebooted.spent_micros(), 10 * kNat);
  for (uint32_t value = 100; rebooted.check_memoized(1, kNat, 5, value) == Status::kOk; ++value) {
    ASSERT_EQ(rebooted.charge_memoized(1, kNat, 5, value, &id), Status::kOk);
  }
  const uint64_t spent = rebooted.spent_micros();
  EXPECT_EQ(rebooted.charge_memoized(1, kNat, 5, 999, &id), Status::kMemoTableFull);
  EXPECT_EQ(rebooted.spent_micros(), spent);
  EXPECT_EQ(rebooted.charge_memoized(1, kNat, 5, 17, &id), Status::kOk);  // known: still fine
  // A ledger without a secret cannot memoize.
  blur::sim::SimPort plain_port(64);
  blur::Ledger plain;
  ASSERT_EQ(plain.provision(plain_port.port(), blur::sim::SimPort::kLedgerPartition, policy, 9), Status::kOk);
  EXPECT_TRUE(plain.secret() == nullptr);
  EXPECT_EQ(plain.charge_memoized(1, kNat, 5, 17, &id), Status::kInvalidArgument);
}

}  // namespace
