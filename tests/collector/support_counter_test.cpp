#include "estimate/support_counter.h"

#include <gtest/gtest.h>

#include <random>

#include "blur/hadamard_response.h"

namespace {

using namespace blur::collector;

// The Walsh-Hadamard shortcut counts exactly what the definition says:
// report j supports v iff popcount((v + 1) & j) is even.
TEST(SupportCounter, HadamardTransformEqualsTheDefinition) {
  const MetricConfig metric{1, MechanismId::kHadamardResponse, 1000000, 13};
  const uint32_t size = blur::hadamard_size(13);
  SupportCounter counter(metric);
  std::vector<uint64_t> expected(13, 0);
  std::mt19937 rng(5);
  for (int i = 0; i < 5000; ++i) {
    const uint32_t j = rng() % size;
    const uint64_t multiplicity = 1 + rng() % 3;
    counter.add(j, std::string(), multiplicity);
    for (uint32_t v = 0; v < 13; ++v) {
      if ((__builtin_popcount((v + 1) & j) & 1) == 0) expected[v] += multiplicity;
    }
  }
  EXPECT_EQ(counter.counts(), expected);
}

// Local hashing: tallying by (a, bucket xor top(b)) counts exactly what the
// definition says: (a, b, y) supports v iff top(a * v + b) = y.
TEST(SupportCounter, LocalHashAggregationEqualsTheDefinition) {
  for (auto mechanism : {MechanismId::kOptimizedLocalHashing, MechanismId::kBinaryLocalHashing}) {
    const MetricConfig metric{1, mechanism, 4000000, 100};
    const auto shape = local_hash_shape(metric);
    const uint32_t shift = shape.field_bits - shape.bucket_bits;
    SupportCounter counter(metric);
    std::vector<uint64_t> expected(100, 0);
    std::mt19937 rng(6);
    for (int i = 0; i < 3000; ++i) {
      const uint32_t a = rng() % (1u << shape.field_bits), b = rng() % (1u << shape.field_bits);
      const uint32_t y = rng() % (1u << shape.bucket_bits);
      counter.add(SupportCounter::pack_local_hash(a, b, y), std::string());
      for (uint32_t v = 0; v < 100; ++v) {
        expected[v] += ((blur::gf2_multiply(a, v, shape.field_bits) ^ b) >> shift) == y;
      }
    }
    EXPECT_EQ(counter.counts(), expected) << mechanism_name(mechanism);
  }
}

TEST(SupportCounter, UnaryBitsAndScalarValues) {
  SupportCounter unary(MetricConfig{2, MechanismId::kOptimizedUnaryEncoding, 1000000, 12});
  unary.add(0, std::string("\x81\x08", 2), 2);  // values 0, 7, 11
  EXPECT_EQ(unary.counts(), (std::vector<uint64_t>{2, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 2}));
  EXPECT_EQ(unary.reports(), 2u);
  SupportCounter grr(MetricConfig{3, MechanismId::kGeneralizedRandomizedResponse, 1000000, 4});
  grr.add(2, std::string());
  grr.add(2, std::string(), 4);
  EXPECT_EQ(grr.counts(), (std::vector<uint64_t>{0, 0, 5, 0}));
}

}  // namespace
