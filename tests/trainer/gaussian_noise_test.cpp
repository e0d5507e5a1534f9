// The trainer's noise: AES-256-CTR addressed by block (both implementations
// agree with each other and with FIPS-197) and the Gaussian noise built on
// it, whose values do not depend on how a vector is split over threads.
#include "trainer/random/gaussian_noise.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "trainer/random/aes_ctr.h"

namespace {

using namespace blur::trainer;

std::array<uint8_t, 32> key_from(uint64_t seed) {
  DrbgStream stream(TrainSeed::from_u64(seed), "aes-test", 0);
  std::array<uint8_t, 32> key{};
  stream.fill(key.data(), key.size());
  return key;
}

// FIPS-197 Appendix C.3: AES-256 with key 00 01 .. 1f encrypts
// 00 11 22 .. ff to 8e a2 b7 ca 51 67 45 bf ea fc 49 90 4b 49 60 89. As a
// counter block: prefix 00 11 .. 77, block index 0x8899aabbccddeeff.
TEST(AesCtr, MatchesFips197OnBothImplementations) {
  std::array<uint8_t, 32> key{};
  for (int k = 0; k < 32; ++k) key[static_cast<size_t>(k)] = static_cast<uint8_t>(k);
  const std::array<uint8_t, 8> prefix = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77};
  const uint8_t expected[16] = {0x8e, 0xa2, 0xb7, 0xca, 0x51, 0x67, 0x45, 0xbf,
                                0xea, 0xfc, 0x49, 0x90, 0x4b, 0x49, 0x60, 0x89};
  for (const bool aes_ni : {false, true}) {
    const AesCtr ctr(key, prefix, aes_ni);
    uint8_t out[16];
    ctr.blocks(0x8899aabbccddeeffULL, 1, out);
    EXPECT_EQ(std::memcmp(out, expected, 16), 0) << "aes_ni allowed: " << aes_ni;
  }
}

// Every split of a request gives the same bytes, on both implementations
// (counts that are and are not multiples of the 8-block pipeline, and a
// counter that crosses a byte boundary of the big-endian index).
TEST(AesCtr, ImplementationsAndSplitsAgree) {
  const std::array<uint8_t, 8> prefix = {1, 2, 3, 4, 5, 6, 7, 8};
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const std::array<uint8_t, 32> key = key_from(seed);
    const AesCtr portable(key, prefix, false);
    const AesCtr fast(key, prefix, true);
    EXPECT_FALSE(portable.uses_aes_ni());
    const uint64_t first = 250 + seed;  // crosses index 256
    const size_t count = 37;
    std::vector<uint8_t> a(16 * count), b(16 * count), c(16 * count);
    portable.blocks(first, count, a.data());
    fast.blocks(first, count, b.data());
    EXPECT_EQ(a, b);
    for (size_t k = 0; k < count; k += 5) {
      fast.blocks(first + k, std::min<size_t>(5, count - k), c.data() + 16 * k);
    }
    EXPECT_EQ(a, c);
  }
}

TEST(GaussianNoise, ValuesDoNotDependOnTheSplitOrTheImplementation) {
  const TrainSeed seed = TrainSeed::from_u64(9);
  const GaussianNoise fast(seed, "noise", 3);
  const GaussianNoise portable(seed, "noise", 3, false);
  const size_t n = 200003;  // not a multiple of the chunk or of 2
  std::vector<float> whole(n, 0.0f), pieces(n, 0.0f), threads3(n, 0.0f), slow(n, 0.0f);
  fast.add(whole.data(), n, 2.5);
  fast.add(pieces.data(), 1001, 2.5);
  fast.add(pieces.data() + 1001, n - 1001, 2.5, 1001);
  fast.add_parallel(threads3.data(), n, 2.5, 3);
  portable.add(slow.data(), n, 2.5);
  EXPECT_EQ(whole, pieces);
  EXPECT_EQ(whole, threads3);
  EXPECT_EQ(whole, slow);
  // add() is stddev * normal(i), rounded once to float.
  for (uint64_t i : {uint64_t{0}, uint64_t{1}, uint64_t{77777}, uint64_t{n - 1}}) {
    EXPECT_EQ(whole[i], static_cast<float>(2.5 * fast.normal(i))) << i;
  }
  // Another step or label: other values.
  const GaussianNoise next(seed, "noise", 4);
  const GaussianNoise other(seed, "vocabulary", 3);
  EXPECT_NE(fast.normal(0), next.normal(0));
  EXPECT_NE(fast.normal(0), other.normal(0));
  EXPECT_THROW(fast.normal(uint64_t{1} << 47), std::invalid_argument);
}

}  // namespace
