#include "blur/mechanisms/local_hashing.h"

#include <gtest/gtest.h>
#include <math.h>

#include "blur/sampling/rng.h"
#include "sim_port.h"
#include "stats.h"

namespace {

using blur::LocalHashing;
using blur::Status;

// Every nonzero a multiplies GF(2^k) bijectively: the polynomial is
// irreducible (a reducible one has zero divisors). All k <= 8 in full; for
// k = 9..12 a few multipliers.
TEST(LocalHashing, FieldMultiplicationIsBijective) {
  static bool seen[1 << 12];
  for (uint32_t k = 1; k <= 12; ++k) {
    const uint32_t size = 1u << k;
    for (uint32_t a = 1; a < size; a = (k <= 8 ? a + 1 : a * 3 + 1)) {
      for (uint32_t v = 0; v < size; ++v) seen[v] = false;
      for (uint32_t v = 0; v < size; ++v) {
        const uint32_t product = blur::gf2_multiply(a, v, k);
        ASSERT_LT(product, size);
        ASSERT_FALSE(seen[product]) << "k " << k << " a " << a;
        seen[product] = true;
      }
      EXPECT_EQ(blur::gf2_multiply(a, 1, k), a);
      EXPECT_EQ(blur::gf2_multiply(a, 7 % size, k), blur::gf2_multiply(7 % size, a, k));
    }
  }
}

// The family is exactly pairwise independent: over all (a, b) in GF(2^4)^2
// with g = 4, each pair v != v' collides for exactly 1/g of the seeds and
// each value lands in each bucket for exactly 1/g of them.
TEST(LocalHashing, FamilyIsExactlyUniformAndPairwiseIndependent) {
  const uint32_t k = 4, bucket_bits = 2;
  auto hash = [&](uint32_t a, uint32_t b, uint32_t v) {
    return (blur::gf2_multiply(a, v, k) ^ b) >> (k - bucket_bits);
  };
  for (uint32_t v = 0; v < 16; ++v) {
    uint32_t buckets[4] = {};
    for (uint32_t a = 0; a < 16; ++a) {
      for (uint32_t b = 0; b < 16; ++b) ++buckets[hash(a, b, v)];
    }
    for (uint32_t count : buckets) EXPECT_EQ(count, 64u);
    for (uint32_t w = v + 1; w < 16; ++w) {
      uint32_t collisions = 0;
      for (uint32_t a = 0; a < 16; ++a) {
        for (uint32_t b = 0; b < 16; ++b) collisions += hash(a, b, v) == hash(a, b, w);
      }
      EXPECT_EQ(collisions, 64u) << v << " " << w;
    }
  }
}

TEST(LocalHashing, ShapesAndBuilder) {
  using Kind = LocalHashing::Kind;
  EXPECT_EQ(LocalHashing::shape(Kind::kOptimized, 500000, 4096).bucket_bits, 1u);   // g = 2
  EXPECT_EQ(LocalHashing::shape(Kind::kOptimized, 1000000, 4096).bucket_bits, 2u);  // e + 1 = 3.7
  EXPECT_EQ(LocalHashing::shape(Kind::kOptimized, 4000000, 4096).bucket_bits, 6u);  // 55.6 -> 64
  EXPECT_EQ(LocalHashing::shape(Kind::kOptimized, 20000000, 4096).bucket_bits, 8u);
  EXPECT_EQ(LocalHashing::shape(Kind::kBinary, 4000000, 4096).bucket_bits, 1u);
  EXPECT_EQ(LocalHashing::shape(Kind::kOptimized, 1000000, 4096).field_bits, 12u);
  EXPECT_EQ(LocalHashing::shape(Kind::kOptimized, 1000000, 100).field_bits, 7u);
  EXPECT_EQ(LocalHashing::shape(Kind::kOptimized, 4000000, 2).field_bits, 6u);
  EXPECT_EQ(LocalHashing::create(Kind::kOptimized, 1000000, 4097).status(),
            Status::kInvalidArgument);
}

// What the estimator assumes, measured on the real sampler: a report
// supports its own value with p = e^eps/(e^eps + g - 1) and any given other
// value with q = 1/g (binomial z-scores, false-alarm rate 1e-6 each; each
// sample also rejects p off by 0.02).
TEST(LocalHashing, SupportProbabilitiesArePAndQ) {
  blur::sim::SimPort port(71);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const uint64_t n = 50000;
  for (auto kind : {LocalHashing::Kind::kOptimized, LocalHashing::Kind::kBinary}) {
    const auto lh = LocalHashing::create(kind, 1000000, 100);
    ASSERT_TRUE(lh.ok());
    const auto shape = lh.value().shape();
    const double g = 1u << shape.bucket_bits;
    const double e = exp(1.0);
    const double p = e / (e + g - 1);
    uint64_t own = 0, other = 0;
    for (uint64_t i = 0; i < n; ++i) {
      uint32_t seed = 0, bucket = 0;
      ASSERT_EQ(lh.value().randomize(rng, 42, &seed, &bucket), Status::kOk);
      ASSERT_LT(bucket, static_cast<uint32_t>(g));
      const uint32_t a = seed >> 16, b = seed & 0xFFFF;
      const uint32_t shift = shape.field_bits - shape.bucket_bits;
      own += ((blur::gf2_multiply(a, 42, shape.field_bits) ^ b) >> shift) == bucket;
      other += ((blur::gf2_multiply(a, 17, shape.field_bits) ^ b) >> shift) == bucket;
    }
    EXPECT_LT(fabs(blur_test::binomial_z(own, n, p)), blur_test::kZ1e6);
    EXPECT_GT(fabs(blur_test::binomial_z(own, n, p + 0.02)), blur_test::kZ1e6);
    EXPECT_LT(fabs(blur_test::binomial_z(other, n, 1 / g)), blur_test::kZ1e6);
  }
}

}  // namespace
