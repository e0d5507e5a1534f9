#include "blur/mechanisms/rappor.h"

#include <gtest/gtest.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "blur/sampling/rng.h"
#include "kat_bloom_hash.inc"  // kKatBloomHash
#include "scripted_random.h"
#include "sim_port.h"
#include "stats.h"

namespace {

using blur::Rappor;
using blur::RapporShape;
using blur::Status;

constexpr double kTwo64 = 18446744073709551616.0;

int bit(const uint8_t* bits, uint32_t i) { return (bits[i / 8] >> (i % 8)) & 1; }

TEST(Rappor, BuilderValidates) {
  const blur::BloomHashKey key{1, 0};
  EXPECT_EQ(Rappor::create(0, 16, RapporShape{}, key).status(), Status::kInvalidArgument);
  EXPECT_EQ(Rappor::create(1000000, 1, RapporShape{}, key).status(), Status::kInvalidArgument);
  EXPECT_EQ(Rappor::create(1000000, 16, RapporShape{100, 2, 64}, key).status(),
            Status::kInvalidArgument);  // not a power of two
  EXPECT_EQ(Rappor::create(1000000, 16, RapporShape{8192, 2, 64}, key).status(),
            Status::kInvalidArgument);  // beyond the payload
  EXPECT_EQ(Rappor::create(1000000, 16, RapporShape{256, 0, 64}, key).status(),
            Status::kInvalidArgument);
  EXPECT_EQ(Rappor::create(1000000, 16, RapporShape{256, 17, 64}, key).status(),
            Status::kInvalidArgument);
  EXPECT_EQ(Rappor::create(1000000, 16, RapporShape{256, 2, 0}, key).status(),
            Status::kInvalidArgument);
  const auto rappor = Rappor::create(2000000, 4096, RapporShape{}, key);
  ASSERT_TRUE(rappor.ok());
  EXPECT_EQ(rappor.value().epsilon_charged(), 2000000u);
  EXPECT_EQ(rappor.value().payload_bytes(), 32u);
  EXPECT_EQ(rappor.value().id(), blur::MechanismId::kRappor);
}

// The realized loss 2h ln((1 - q) / q) is at most the charge and within
// 1e-8 nats of it; RAPPOR's check value: f = 1/2 (q = 1/4), h = 2 gives
// eps_inf = 4 ln 3 = 4.3944 (docs/math.md §3.7).
TEST(Rappor, ChargeIsTheRealizedLossRoundedUp) {
  for (uint32_t h : {1u, 2u, 4u, 16u}) {
    for (uint32_t epsilon_micros : {500000u, 1000000u, 4000000u, 20000000u}) {
      const double m = static_cast<double>(Rappor::flip_numerator(epsilon_micros, h));
      const double realized = 2.0 * h * log((kTwo64 - m) / m);
      EXPECT_LE(realized, epsilon_micros / 1e6 + 1e-12);
      EXPECT_GT(realized, epsilon_micros / 1e6 - 1e-8);
    }
  }
  const double q = static_cast<double>(Rappor::flip_numerator(4394449, 2)) / kTwo64;
  EXPECT_LT(fabs(q - 0.25), 1e-6);
}

// Positions equal the independent reference (Python hashlib) in
// tests/vectors/bloom_hash.kat.
TEST(BloomHash, KnownAnswers) {
  size_t vectors = 0;
  for (const char* line = kKatBloomHash; *line != '\0';) {
    const char* end = strchr(line, '\n');
    const size_t length = end ? static_cast<size_t>(end - line) : strlen(line);
    if (length > 0 && line[0] != '#') {
      char buffer[512];
      ASSERT_LT(length, sizeof buffer);
      memcpy(buffer, line, length);
      buffer[length] = '\0';
      char* cursor = buffer;
      const uint32_t metric_id = static_cast<uint32_t>(strtoul(cursor, &cursor, 10));
      const uint64_t hash_key = strtoull(cursor, &cursor, 10);
      const uint32_t cohort = static_cast<uint32_t>(strtoul(cursor, &cursor, 10));
      while (*cursor == ' ') ++cursor;
      const char* value = cursor;
      while (*cursor != ' ') ++cursor;
      const size_t value_length = static_cast<size_t>(cursor - value);
      const uint32_t bloom_bits = static_cast<uint32_t>(strtoul(cursor, &cursor, 10));
      const uint32_t hash_count = static_cast<uint32_t>(strtoul(cursor, &cursor, 10));
      uint16_t positions[blur::kMaxBloomHashes];
      ASSERT_EQ(blur::bloom_positions(blur::BloomHashKey{metric_id, hash_key}, cohort,
                                      reinterpret_cast<const uint8_t*>(value), value_length,
                                      bloom_bits, hash_count, positions),
                Status::kOk);
      for (uint32_t j = 0; j < hash_count; ++j) {
        const unsigned long expected = strtoul(cursor + 1, &cursor, 10);
        EXPECT_EQ(positions[j], expected) << "vector " << vectors << " position " << j;
      }
      ++vectors;
    }
    line += length + (end ? 1 : 0);
  }
  EXPECT_GE(vectors, 8u);
  uint16_t positions[2];
  EXPECT_EQ(blur::bloom_positions({1, 0}, 0, nullptr, 0, 100, 2, positions),
            Status::kInvalidArgument);
  char text[10];
  EXPECT_EQ(blur::decimal_text(0, text), 1u);
  EXPECT_EQ(memcmp(text, "0", 1), 0);
  EXPECT_EQ(blur::decimal_text(4294967295u, text), 10u);
  EXPECT_EQ(memcmp(text, "4294967295", 10), 0);
}

// Per-bit marginals: a bit of the value's filter (in the report's cohort) is
// 1 with p = 1 - q, any other bit with q; cohorts are uniform. z-tests at
// a false-alarm rate of 1e-6 each. Power: an outside-bit q off by 0.01 and
// an in-filter p off by 0.03 (each over 10 standard errors) are rejected.
TEST(Rappor, PerBitMarginalsAreExactlyPAndQ) {
  blur::sim::SimPort port(51);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const RapporShape shape{64, 2, 8};
  const blur::BloomHashKey key{5, 99};
  const uint64_t n = 20000;
  for (uint32_t epsilon_micros : {1000000u, 4000000u}) {
    const auto rappor = Rappor::create(epsilon_micros, 10, shape, key);
    ASSERT_TRUE(rappor.ok());
    const double q = static_cast<double>(Rappor::flip_numerator(epsilon_micros, 2)) / kTwo64;
    uint64_t in_filter = 0, in_filter_ones = 0, outside = 0, outside_ones = 0;
    uint64_t cohorts[8] = {};
    for (uint64_t i = 0; i < n; ++i) {
      uint8_t bits[8];
      uint32_t cohort = 0;
      ASSERT_EQ(rappor.value().randomize(rng, 7, &cohort, bits), Status::kOk);
      ASSERT_LT(cohort, 8u);
      ++cohorts[cohort];
      uint16_t positions[2];
      ASSERT_EQ(blur::bloom_positions(key, cohort, reinterpret_cast<const uint8_t*>("7"), 1, 64, 2,
                                      positions),
                Status::kOk);
      for (uint32_t b = 0; b < 64; ++b) {
        const bool member = b == positions[0] || b == positions[1];
        (member ? in_filter : outside) += 1;
        (member ? in_filter_ones : outside_ones) += bit(bits, b);
      }
    }
    EXPECT_LT(fabs(blur_test::binomial_z(in_filter_ones, in_filter, 1 - q)), blur_test::kZ1e6);
    EXPECT_LT(fabs(blur_test::binomial_z(outside_ones, outside, q)), blur_test::kZ1e6);
    EXPECT_GT(fabs(blur_test::binomial_z(outside_ones, outside, q + 0.01)), blur_test::kZ1e6);
    EXPECT_GT(fabs(blur_test::binomial_z(in_filter_ones, in_filter, 1 - q - 0.03)),
              blur_test::kZ1e6);
    double chi = 0;
    for (uint64_t c : cohorts) chi += (c - n / 8.0) * (c - n / 8.0) / (n / 8.0);
    EXPECT_LT(chi, blur_test::chi_square_critical_1e6(7));
  }
}

// Empirical privacy audit: for the one bit where the filters of two values
// differ most plainly (in one filter, not the other, same cohort), the
// observed log-ratio of P(bit = 1) between the two inputs times 2h matches
// the charge within 5 standard errors (delta method; false-alarm rate 6e-7).
TEST(Rappor, PrivacyLossMatchesTheCharge) {
  blur::sim::SimPort port(52);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const RapporShape shape{32, 1, 1};  // one cohort, one hash: values 0 and 1 land apart
  const blur::BloomHashKey key{1, 0};
  uint16_t p0[1], p1[1];
  ASSERT_EQ(blur::bloom_positions(key, 0, reinterpret_cast<const uint8_t*>("0"), 1, 32, 1, p0),
            Status::kOk);
  ASSERT_EQ(blur::bloom_positions(key, 0, reinterpret_cast<const uint8_t*>("1"), 1, 32, 1, p1),
            Status::kOk);
  ASSERT_NE(p0[0], p1[0]);
  const auto rappor = Rappor::create(2000000, 2, shape, key);
  ASSERT_TRUE(rappor.ok());
  const uint64_t n = 40000;
  uint64_t ones[2] = {};
  for (uint32_t value : {0u, 1u}) {
    for (uint64_t i = 0; i < n; ++i) {
      uint8_t bits[4];
      uint32_t cohort = 0;
      ASSERT_EQ(rappor.value().randomize(rng, value, &cohort, bits), Status::kOk);
      ones[value] += bit(bits, p0[0]);
    }
  }
  const double a = static_cast<double>(ones[0]) / n, b = static_cast<double>(ones[1]) / n;
  // Each of the two differing bits contributes ln(a / b); the pair is 2 ln(a/b) = eps.
  const double loss = 2 * log(a / b);
  const double se = 2 * sqrt((1 - a) / (n * a) + (1 - b) / (n * b));
  EXPECT_LT(fabs(loss - 2.0), 5 * se) << loss;
}

TEST(Rappor, FailsClosed) {
  const auto rappor = Rappor::create(1000000, 16, RapporShape{}, blur::BloomHashKey{1, 0});
  ASSERT_TRUE(rappor.ok());
  uint8_t bits[32];
  uint32_t cohort = 0;
  blur_test::ScriptedRandomForFaultInjection failing(
      blur_test::ScriptedRandomForFaultInjection::Mode::kFail);
  EXPECT_EQ(rappor.value().randomize(failing, 3, &cohort, bits), Status::kEntropyFailure);
  blur::sim::SimPort port(53);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  EXPECT_EQ(rappor.value().randomize(rng, 16, &cohort, bits), Status::kInvalidArgument);
}

}  // namespace
