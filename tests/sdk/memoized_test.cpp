// Longitudinal privacy: HMAC-SHA256, the permanent-response stream, the
// memoized (PRR + IRR) mechanisms, LOLOHA, and the ledger's configuration
// pins. (The audit harness attacks them end to end: tests/sdk/privacy_audit.)
#include "blur/mechanisms/memoized.h"

#include <gtest/gtest.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blur/sampling/hmac_sha256.h"
#include "blur/sampling/rng.h"
#include "blur/storage/ledger.h"
#include "blur/mechanisms/permanent_stream.h"
#include "blur/mechanisms/loloha.h"
#include "blur/mechanisms/memoized_mean.h"
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

TEST(PermanentStream, DeterministicPerSecretMetricConfigurationAndValue) {
  uint8_t secret[32], other_secret[32];
  for (int i = 0; i < 32; ++i) secret[i] = static_cast<uint8_t>(i), other_secret[i] = 7;
  uint8_t a[100], b[100], c[100], d[100], e[100], f[100];
  const blur::MemoKey key{3, 77}, other_metric{4, 77}, other_config{3, 78};
  blur::PermanentStream s1(secret, key, 9), s2(secret, key, 9), s3(secret, other_metric, 9),
      s4(secret, key, 10), s5(other_secret, key, 9), s6(secret, other_config, 9);
  ASSERT_EQ(s1.fill(a, 37), Status::kOk);  // split reads give the same bytes
  ASSERT_EQ(s1.fill(a + 37, 63), Status::kOk);
  ASSERT_EQ(s2.fill(b, 100), Status::kOk);
  ASSERT_EQ(s3.fill(c, 100), Status::kOk);
  ASSERT_EQ(s4.fill(d, 100), Status::kOk);
  ASSERT_EQ(s5.fill(e, 100), Status::kOk);
  ASSERT_EQ(s6.fill(f, 100), Status::kOk);
  EXPECT_EQ(memcmp(a, b, 100), 0);
  EXPECT_NE(memcmp(a, c, 100), 0);
  EXPECT_NE(memcmp(a, d, 100), 0);
  EXPECT_NE(memcmp(a, e, 100), 0);
  EXPECT_NE(memcmp(a, f, 100), 0);  // another configuration: other permanent responses
  blur::PermanentStream no_secret(nullptr, key, 9);
  EXPECT_EQ(no_secret.fill(a, 1), Status::kInvalidArgument);
  // The digest covers every parameter of the configuration.
  using blur::MechanismId;
  const uint32_t base = blur::memo_config_digest(1, MechanismId::kLoloha, 500000, 16, 2000000, 0);
  EXPECT_NE(base, blur::memo_config_digest(2, MechanismId::kLoloha, 500000, 16, 2000000, 0));
  EXPECT_NE(base, blur::memo_config_digest(1, MechanismId::kRappor, 500000, 16, 2000000, 0));
  EXPECT_NE(base, blur::memo_config_digest(1, MechanismId::kLoloha, 500001, 16, 2000000, 0));
  EXPECT_NE(base, blur::memo_config_digest(1, MechanismId::kLoloha, 500000, 17, 2000000, 0));
  EXPECT_NE(base, blur::memo_config_digest(1, MechanismId::kLoloha, 500000, 16, 2000001, 0));
  EXPECT_NE(base, blur::memo_config_digest(1, MechanismId::kLoloha, 500000, 16, 2000000, 1));
}

// The per-report flip of a memoized bit vector: eta / k nats per bit, so a
// report's loss against any other permanent response is at most eta (the
// charge), and within 1e-9 nats of it.
TEST(Memoized, EachReportChargesItsLossAgainstThePermanentResponse) {
  const auto sue = blur::UnaryEncoding::create(blur::UnaryEncoding::Kind::kSymmetric, 4 * kNat, 64);
  ASSERT_TRUE(sue.ok());
  for (const uint64_t eta : {kNat / 4, kNat, 8 * kNat}) {
    const auto memo = blur::Memoized<blur::UnaryEncoding>::create(
        sue.value(), static_cast<blur::EpsilonMicros>(eta), blur::MemoKey{1, 2});
    ASSERT_TRUE(memo.ok());
    EXPECT_EQ(memo.value().epsilon_charged(), eta);
    const double q2 = memo.value().instantaneous_numerator() / kTwo64;
    const double loss = 64 * log((1 - q2) / q2);  // all 64 bits of P and P' differ
    EXPECT_LE(loss, eta / 1e6 + 1e-12);
    EXPECT_GT(loss, eta / 1e6 - 1e-6);
  }
  const auto oue = blur::UnaryEncoding::create(blur::UnaryEncoding::Kind::kOptimized, kNat, 8);
  EXPECT_EQ(blur::Memoized<blur::UnaryEncoding>::create(oue.value(), kNat, {1, 2}).status(),
            Status::kInvalidArgument);  // asymmetric flips
}

// One device reporting the same value many times: the reports average to
// its permanent response, never to the truth; RAPPOR's cohort is the
// device's for the metric, the same for every value.
TEST(Memoized, RepeatedReportsRevealOnlyThePermanentResponse) {
  blur::sim::SimPort port(62);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const auto rappor =
      blur::Rappor::create(2 * kNat, 64, blur::RapporShape{32, 1, 64}, blur::BloomHashKey{5, 0});
  ASSERT_TRUE(rappor.ok());
  uint8_t secret[32];
  for (int i = 0; i < 32; ++i) secret[i] = static_cast<uint8_t>(3 * i + 1);
  // eta = 20 nats over 32 bits: q2 ~ 0.35; the permanent response shows
  // through the average of 4000 reports.
  const auto noisy = blur::Memoized<blur::Rappor>::create(rappor.value(), 20 * kNat, {5, 9});
  ASSERT_TRUE(noisy.ok());
  const double q2 = noisy.value().instantaneous_numerator() / kTwo64;
  const uint64_t n = 4000;
  uint64_t ones[32] = {};
  static blur::ReportPayload payload;
  ASSERT_EQ(noisy.value().randomize(rng, secret, 17, &payload), Status::kOk);
  const uint32_t cohort = payload.seed;
  for (uint32_t value = 0; value < 64; ++value) {  // one cohort for every value
    ASSERT_EQ(noisy.value().randomize(rng, secret, value, &payload), Status::kOk);
    EXPECT_EQ(payload.seed, cohort) << value;
  }
  // The permanent filter, from its own stream (as randomize draws it).
  uint8_t permanent[4];
  {
    blur::PermanentStream stream(secret, {5, 9}, 17);
    ASSERT_EQ(rappor.value().randomize_in_cohort(stream, cohort, 17, permanent), Status::kOk);
  }
  for (uint64_t i = 0; i < n; ++i) {
    ASSERT_EQ(noisy.value().randomize(rng, secret, 17, &payload), Status::kOk);
    for (int b = 0; b < 32; ++b) ones[b] += (payload.bits[b / 8] >> (b % 8)) & 1;
  }
  for (int b = 0; b < 32; ++b) {
    const int prr = (permanent[b / 8] >> (b % 8)) & 1;
    EXPECT_LT(fabs(blur_test::binomial_z(ones[b], n, prr ? 1 - q2 : q2)), blur_test::kZ1e6) << b;
  }
  // Another device's cohorts are spread over all 64 (not all equal to this one's).
  uint32_t same = 0;
  for (uint32_t device = 0; device < 256; ++device) {
    uint8_t other[32] = {};
    memcpy(other, &device, sizeof device);
    other[31] = 9;
    ASSERT_EQ(noisy.value().randomize(rng, other, 17, &payload), Status::kOk);
    same += payload.seed == cohort;
  }
  EXPECT_LT(same, 32u);
}

// Memoized 1BitMean: the memoized bit goes out through randomized response
// at eta every report (so repeated reports of one value differ), and over
// devices P(sent 1) = gamma + (1 - 2 gamma) P(bit 1) (z-test at 1e-6).
TEST(MemoizedMean, EveryReportFlipsTheMemoizedBit) {
  blur::sim::SimPort port(65);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const auto mean = blur::MemoizedMean::create(kNat, 2 * kNat, 11, 10, {3, 4});
  ASSERT_TRUE(mean.ok());
  EXPECT_EQ(mean.value().epsilon_charged(), kNat);
  EXPECT_EQ(mean.value().longitudinal_epsilon(), 2 * kNat);
  const double gamma = 1 / (exp(1.0) + 1), e = exp(2.0);
  const double p_bit = 1 / (e + 1) + 0.7 * (e - 1) / (e + 1);  // x = 7 of M = 10
  const uint64_t n = 20000;
  uint64_t ones = 0, changes = 0;
  static blur::ReportPayload payload;
  for (uint64_t device = 0; device < n; ++device) {
    uint8_t secret[32] = {};
    memcpy(secret, &device, sizeof device);
    secret[31] = 2;
    ASSERT_EQ(mean.value().randomize(rng, secret, 7, &payload), Status::kOk);
    const uint32_t first = payload.value;
    ones += first;
    ASSERT_EQ(mean.value().randomize(rng, secret, 7, &payload), Status::kOk);
    changes += payload.value != first;
  }
  EXPECT_LT(fabs(blur_test::binomial_z(ones, n, gamma + (1 - 2 * gamma) * p_bit)),
            blur_test::kZ1e6);
  // Two reports of one value differ with 2 gamma (1 - gamma).
  EXPECT_LT(fabs(blur_test::binomial_z(changes, n, 2 * gamma * (1 - gamma))), blur_test::kZ1e6);
}

// LOLOHA: over devices one report supports the true value with
// p = p1 p2 + (1 - p1) q2 and another value with 1/g (z-tests at 1e-6); one
// device's hash seed is the same in every report; repeated reports of one
// value concentrate on its permanent bucket.
TEST(Loloha, OneReportSupportsTheTruthWithTheTwoStageProbability) {
  blur::sim::SimPort port(66);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const auto loloha = blur::Loloha::create(kNat / 2, 2 * kNat, 16, {7, 8});
  ASSERT_TRUE(loloha.ok());
  const blur::LocalHashShape shape = loloha.value().shape();
  ASSERT_EQ(shape.bucket_bits, 1u);  // g = 2 at eta 0.5
  const double e1 = exp(2.0), e2 = exp(0.5);
  const double p1 = e1 / (e1 + 1), p2 = e2 / (e2 + 1), q2 = 1 / (e2 + 1);
  const double p = p1 * p2 + (1 - p1) * q2;
  const uint64_t n = 20000;
  uint64_t supports_truth = 0, supports_other = 0;
  static blur::ReportPayload payload;
  auto hashed = [&](uint32_t seed, uint32_t v) {
    return (blur::gf2_multiply(seed >> 16, v, shape.field_bits) ^ (seed & 0xFFFF)) >>
           (shape.field_bits - shape.bucket_bits);
  };
  for (uint64_t device = 0; device < n; ++device) {
    uint8_t secret[32] = {};
    memcpy(secret, &device, sizeof device);
    secret[31] = 3;
    ASSERT_EQ(loloha.value().randomize(rng, secret, 5, &payload), Status::kOk);
    supports_truth += hashed(payload.seed, 5) == payload.value;
    supports_other += hashed(payload.seed, 9) == payload.value;
    const uint32_t seed = payload.seed;
    ASSERT_EQ(loloha.value().randomize(rng, secret, 9, &payload), Status::kOk);
    ASSERT_EQ(payload.seed, seed);  // the device's hash, whatever the value
  }
  EXPECT_LT(fabs(blur_test::binomial_z(supports_truth, n, p)), blur_test::kZ1e6);
  EXPECT_LT(fabs(blur_test::binomial_z(supports_other, n, 0.5)), blur_test::kZ1e6);
  EXPECT_EQ(blur::Loloha::create(kNat, 0, 16, {1, 1}).status(), Status::kInvalidArgument);
  EXPECT_EQ(blur::Loloha::create(0, kNat, 16, {1, 1}).status(), Status::kInvalidArgument);
  EXPECT_EQ(blur::Loloha::create(kNat, kNat, 4097, {1, 1}).status(), Status::kInvalidArgument);
}

// The ledger charges a memoized report like any other, the same for every
// value; it pins each memoized metric's configuration (across reboots) and
// refuses another configuration of the same id; its table holds metrics,
// not values.
TEST(Memoized, LedgerPinsEachMetricsConfiguration) {
  blur::sim::SimPort port(63);
  blur::Ledger ledger;
  blur::LedgerPolicy policy;
  policy.lifetime_cap_micros = 1000 * kNat;
  uint8_t secret[32];
  for (int i = 0; i < 32; ++i) secret[i] = static_cast<uint8_t>(i + 1);
  ASSERT_EQ(ledger.provision(port.port(), blur::sim::SimPort::kLedgerPartition, policy, 9, secret),
            Status::kOk);
  uint64_t id = 0;
  EXPECT_FALSE(ledger.memoized(5, 0xABCD));
  ASSERT_EQ(ledger.charge_memoized(kNat / 2, 5, 0xABCD, &id), Status::kOk);
  EXPECT_EQ(ledger.spent_micros(), kNat / 2);
  EXPECT_TRUE(ledger.memoized(5, 0xABCD));
  ASSERT_EQ(ledger.charge_memoized(kNat / 2, 5, 0xABCD, &id), Status::kOk);
  EXPECT_EQ(ledger.spent_micros(), kNat);
  EXPECT_EQ(ledger.charge_memoized(kNat / 2, 5, 0xABCE, &id), Status::kConfigurationChanged);
  EXPECT_EQ(ledger.check_memoized_config(5, 0xABCE), Status::kConfigurationChanged);
  EXPECT_EQ(ledger.check_memoized_config(6, 0xABCE), Status::kOk);  // not yet recorded
  EXPECT_EQ(ledger.spent_micros(), kNat);
  blur::Ledger rebooted;
  ASSERT_EQ(rebooted.open(port.port(), blur::sim::SimPort::kLedgerPartition), Status::kOk);
  EXPECT_EQ(memcmp(rebooted.secret(), secret, 32), 0);
  EXPECT_TRUE(rebooted.memoized(5, 0xABCD));
  EXPECT_EQ(rebooted.charge_memoized(kNat / 2, 5, 0xABCE, &id), Status::kConfigurationChanged);
  ASSERT_EQ(rebooted.charge_memoized(kNat / 2, 6, 0xABCE, &id), Status::kOk);  // new metric
  EXPECT_EQ(rebooted.spent_micros(), 3 * kNat / 2);
  for (uint32_t metric = 100; rebooted.check_memoized(1, metric, 1) == Status::kOk; ++metric) {
    ASSERT_EQ(rebooted.charge_memoized(1, metric, 1, &id), Status::kOk);
  }
  const uint64_t spent = rebooted.spent_micros();
  EXPECT_EQ(rebooted.charge_memoized(1, 999, 1, &id), Status::kMemoTableFull);
  EXPECT_EQ(rebooted.spent_micros(), spent);
  EXPECT_EQ(rebooted.charge_memoized(1, 5, 0xABCD, &id), Status::kOk);  // recorded: still fine
  // A ledger without a secret cannot memoize.
  blur::sim::SimPort plain_port(64);
  blur::Ledger plain;
  ASSERT_EQ(plain.provision(plain_port.port(), blur::sim::SimPort::kLedgerPartition, policy, 9),
            Status::kOk);
  EXPECT_TRUE(plain.secret() == nullptr);
  EXPECT_EQ(plain.charge_memoized(1, 5, 17, &id), Status::kInvalidArgument);
}

}  // namespace
