// The discrete Gaussian sampler (discrete_gaussian.h): its counts against
// the exact pmf (binned chi-square), with its usual comparisons and with
// the rare 128-bit comparison deciding every draw; moments at the
// trainer's sigma; values that do not depend on the thread split or the
// AES implementation.
//
// Statistical tests use fixed seeds; each threshold is set for a
// false-alarm rate of 1e-6 (chi-square: tests/support/stats.h's critical
// value), so a correct sampler fails one of the 9 chi-square checks with
// probability below 1e-5.
#include "trainer/random/discrete_gaussian.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

#include "stats.h"

namespace {

using namespace blur::trainer;

// Binned chi-square of `samples` against N_Z(0, sigma^2): one bin per value
// whose expected count is >= 5, and two tail bins (everything beyond).
struct ChiSquare {
  double statistic = 0;
  double df = 0;
};
ChiSquare chi_square(const std::vector<int64_t>& samples, double sigma) {
  const auto limit = static_cast<int64_t>(40 * sigma + 10);
  double total = 0;
  std::map<int64_t, double> mass;
  for (int64_t z = -limit; z <= limit; ++z) {
    mass[z] = std::exp(-0.5 * static_cast<double>(z * z) / (sigma * sigma));
    total += mass[z];
  }
  const auto n = static_cast<double>(samples.size());
  int64_t edge = 0;  // bins -edge..edge each expect >= 5
  while (mass[edge + 1] / total * n >= 5) ++edge;
  std::map<int64_t, double> observed;
  for (int64_t s : samples) observed[std::max(-edge - 1, std::min(edge + 1, s))] += 1;
  ChiSquare out;
  for (int64_t bin = -edge - 1; bin <= edge + 1; ++bin) {
    double expected = 0;
    if (bin < -edge || bin > edge) {
      for (int64_t z = edge + 1; z <= limit; ++z) expected += mass[z];
    } else {
      expected = mass[bin];
    }
    expected = expected / total * n;
    const double d = observed[bin] - expected;
    out.statistic += d * d / expected;
    out.df += 1;
  }
  out.df -= 1;
  return out;
}

void expect_matches_pmf(DiscreteGaussianNoise::Comparison comparison, const char* name) {
  for (const unsigned j : {0u, 2u, 5u, 8u}) {
    std::vector<int64_t> samples(1'000'000);
    DiscreteGaussianNoise(TrainSeed::from_u64(11 + j), "chi-square", 0, true, comparison)
        .sample(samples.data(), samples.size(), j);
    const ChiSquare c = chi_square(samples, std::ldexp(1.0, static_cast<int>(j)));
    const double threshold = blur_test::chi_square_critical_1e6(static_cast<int>(c.df));
    std::printf("%s, sigma 2^%u: chi-square %.1f on %.0f df (threshold %.1f at 1e-6)\n", name, j,
                c.statistic, c.df, threshold);
    EXPECT_LT(c.statistic, threshold) << name << ", sigma 2^" << j;
  }
}

TEST(DiscreteGaussian, MatchesTheExactPmf) {
  expect_matches_pmf(DiscreteGaussianNoise::Comparison::kFast, "fast comparisons");
}

// The 128-bit comparison decides about 1e-13 of the acceptances in normal
// use; here it decides every one, against the same pmf.
TEST(DiscreteGaussian, The128BitComparisonAloneMatchesTheExactPmf) {
  expect_matches_pmf(DiscreteGaussianNoise::Comparison::kAlways128Bit, "128-bit comparisons");
}

// At the trainer's scale (sigma 2^21): the variance and the share within
// one sigma are those of the (continuous-like) Gaussian. With 10^6 draws
// the variance's relative standard error is sqrt(2/n) = 0.0014; 0.01 is
// 7 standard errors (false alarm < 1e-11). P(|Z| <= sigma) = 0.682689..;
// its standard error is 0.00047, 0.003 is 6.4 of them.
TEST(DiscreteGaussian, LargeSigmaMoments) {
  std::vector<int64_t> samples(1'000'000);
  DiscreteGaussianNoise(TrainSeed::from_u64(5), "moments", 0)
      .sample(samples.data(), samples.size(), 21);
  const double sigma = std::ldexp(1.0, 21);
  double sum = 0, squares = 0, within = 0;
  for (int64_t s : samples) {
    const auto x = static_cast<double>(s);
    sum += x;
    squares += x * x;
    within += std::fabs(x) <= sigma;
  }
  const auto n = static_cast<double>(samples.size());
  EXPECT_LT(std::fabs(sum / n), 6 * sigma / std::sqrt(n));
  EXPECT_NEAR(squares / n / (sigma * sigma), 1.0, 0.01);
  EXPECT_NEAR(within / n, 0.682689, 0.003);
}

// At the trainer's scale (sigma 2^21, blocks of 2^17 integers): 64 bins of
// sigma / 8 over [-4 sigma, 4 sigma) plus two tails. A bin's mass is the
// normal's over [a - 1/2, b + 1/2] (the sum over the integers differs
// from it by far less than the test can see: Poisson summation, terms
// exp(-2 pi^2 sigma^2)).
TEST(DiscreteGaussian, TrainerScaleBinnedChiSquare) {
  const double sigma = std::ldexp(1.0, 21);
  std::vector<int64_t> samples(1'000'000);
  DiscreteGaussianNoise(TrainSeed::from_u64(31), "binned", 0)
      .sample(samples.data(), samples.size(), 21);
  constexpr int kBins = 66;
  uint64_t counts[kBins] = {};
  const auto width = static_cast<int64_t>(sigma / 8);
  for (int64_t s : samples) {
    const int64_t bin = s < -32 * width ? 0 : s >= 32 * width ? kBins - 1 : 1 + (s + 32 * width) / width;
    ++counts[bin];
  }
  auto cdf = [&](double x) { return 0.5 * std::erfc(-x / (sigma * std::sqrt(2.0))); };
  double probabilities[kBins];
  probabilities[0] = cdf(-32.0 * width - 0.5);
  probabilities[kBins - 1] = probabilities[0];
  for (int b = 1; b < kBins - 1; ++b) {
    const double low = static_cast<double>((b - 1 - 32) * width) - 0.5;
    probabilities[b] = cdf(low + static_cast<double>(width)) - cdf(low);
  }
  const double statistic = blur_test::chi_square(counts, probabilities, kBins, samples.size());
  const double threshold = blur_test::chi_square_critical_1e6(kBins - 1);
  std::printf("sigma 2^21, 66 bins: chi-square %.1f (threshold %.1f at 1e-6)\n", statistic,
              threshold);
  EXPECT_LT(statistic, threshold);
}

TEST(DiscreteGaussian, ValuesDoNotDependOnThreadsOrAes) {
  const size_t n = 3 * DiscreteGaussianNoise::kChunk + 17;
  std::vector<int64_t> one(n), three(n), portable(n);
  const TrainSeed seed = TrainSeed::from_u64(9);
  DiscreteGaussianNoise(seed, "noise", 4).sample(one.data(), n, 20, 1);
  DiscreteGaussianNoise(seed, "noise", 4).sample(three.data(), n, 20, 3);
  DiscreteGaussianNoise(seed, "noise", 4, false).sample(portable.data(), n, 20, 2);
  EXPECT_EQ(one, three);
  EXPECT_EQ(one, portable);
  std::vector<int64_t> part(DiscreteGaussianNoise::kChunk + 9);
  DiscreteGaussianNoise(seed, "noise", 4)
      .sample_range(part.data(), DiscreteGaussianNoise::kChunk, part.size(), 20);
  EXPECT_TRUE(std::equal(part.begin(), part.end(), one.begin() + DiscreteGaussianNoise::kChunk));
  std::vector<int64_t> other(n);
  DiscreteGaussianNoise(seed, "noise", 5).sample(other.data(), n, 20, 1);
  EXPECT_NE(one, other);
}

// The proposals classified four at a time (AVX2, where the CPU has it)
// give exactly the values of the one-at-a-time code, at every sigma the
// batched path serves (blocks of one integer up to 2^22), over enough draws
// that the rare outcomes (rejections, the tail, the exact comparisons) occur.
TEST(DiscreteGaussian, VectorizedProposalsGiveTheSameValues) {
  for (const unsigned j : {0u, 1u, 3u, 4u, 5u, 9u, 16u, 20u, 21u, 26u}) {
    const size_t n = 40 * DiscreteGaussianNoise::kChunk;
    std::vector<int64_t> simd(n), portable(n);
    const TrainSeed seed = TrainSeed::from_u64(40 + j);
    DiscreteGaussianNoise(seed, "noise", 1).sample(simd.data(), n, j, 1);
    DiscreteGaussianNoise(seed, "noise", 1, false).sample(portable.data(), n, j, 1);
    EXPECT_EQ(simd, portable) << "sigma 2^" << j;
  }
}

TEST(DiscreteGaussian, RefusesSigmaAbove2To30) {
  int64_t out[1];
  EXPECT_THROW(DiscreteGaussianNoise(TrainSeed::from_u64(1), "x", 0).sample(out, 1, 31),
               std::invalid_argument);
}

}  // namespace
