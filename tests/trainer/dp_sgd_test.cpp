// DP-SGD: the non-private step is plain SGD, the noise has std sigma C/(qN),
// the noisy sum is integers on the grid (exact discrete Gaussian noise, no
// float noise), a NaN example contributes zero, Poisson batches have mean
// qN, checkpoints resume bit-identically (and carry the caller's plan), and
// training drives the loss down (private and not).
//
// Statistical checks use fixed seeds and thresholds at a false-alarm rate of
// 1e-6 each for a correct implementation (tests/support/stats.h).
#include "trainer/dpsgd/dp_sgd.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "stats.h"
#include "trainer/random/discrete_gaussian.h"
#include "trainer/random/gaussian_noise.h"

namespace blur::trainer {
namespace {

const LanguageModelConfig kSmall{20, 12, 24};

// A deterministic toy language: each sentence counts up from a start token,
// w_{t+1} = w_t + 1 (mod V), so the next word is a function of the current
// one. Starts and lengths vary per example.
std::vector<Example> counting_corpus(size_t n, int32_t vocab) {
  std::vector<Example> corpus;
  for (size_t i = 0; i < n; ++i) {
    Example e;
    const auto start = static_cast<int32_t>((i * 7) % static_cast<size_t>(vocab));
    const size_t length = 6 + (i * 5) % 7;
    for (size_t t = 0; t < length; ++t) {
      e.push_back(static_cast<int32_t>((start + static_cast<int32_t>(t)) % vocab));
    }
    corpus.push_back(e);
  }
  return corpus;
}

ExampleBatch all_of(const std::vector<Example>& corpus) {
  ExampleBatch batch;
  for (const Example& e : corpus) batch.push_back(&e);
  return batch;
}

double mean_loss(LanguageModel& model, const std::vector<Example>& corpus) {
  double total = 0;
  for (double l : model.losses(all_of(corpus))) total += l;
  return total / static_cast<double>(corpus.size());
}

TEST(DpSgd, ValidatesTheConfig) {
  DpSgdConfig c;
  c.dataset_size = 10;
  EXPECT_NO_THROW(validate(c));
  c.noise_multiplier = 1;  // noise without a finite clip norm
  EXPECT_THROW(validate(c), std::invalid_argument);
  c.clip_norm = 1;
  EXPECT_NO_THROW(validate(c));
  c.sampling_rate = 0;
  EXPECT_THROW(validate(c), std::invalid_argument);
  c.sampling_rate = 0.5;
  c.momentum = 1;
  EXPECT_THROW(validate(c), std::invalid_argument);
}

TEST(DpSgd, NonPrivateStepIsPlainSgd) {
  const auto corpus = counting_corpus(10, kSmall.vocab_size);
  LanguageModel model(kSmall, TrainSeed::from_u64(1));
  LanguageModel reference = model;
  DpSgdConfig config;
  config.sampling_rate = 0.5;
  config.dataset_size = corpus.size();
  config.learning_rate = 0.3;
  DpSgdTrainer trainer(model, config, TrainSeed::from_u64(2));
  const ExampleBatch batch{&corpus[0], &corpus[3], &corpus[4], &corpus[8]};
  trainer.step(batch);

  std::vector<float> gradient(reference.parameter_count(), 0.0f);
  reference.accumulate_gradient(batch, GradientOptions{}, gradient.data());
  const float scale = static_cast<float>(1.0 / 5.0);  // 1 / (q N)
  for (size_t k = 0; k < gradient.size(); ++k) {
    const float expected = reference.parameters()[k] - 0.3f * (gradient[k] * scale);
    ASSERT_FLOAT_EQ(trainer.model().parameters()[k], expected) << k;
  }
  EXPECT_EQ(trainer.step_index(), 1u);
}

// An empty batch isolates the noise: the update is -lr * noise / (qN) with
// noise ~ N(0, (sigma C)^2) per coordinate. With P coordinates the sample
// variance s^2 has relative standard error sqrt(2/(P-1)); we accept
// |s^2/sd^2 - 1| <= 4.89 sqrt(2/(P-1)) (normal approximation, 1e-6), the
// mean within 4.89 sd/sqrt(P), and the fraction within one sd within
// 4.89 binomial standard errors of 0.6827.
TEST(DpSgd, NoiseHasStdSigmaCOverExpectedBatchSize) {
  const LanguageModelConfig config_m{2000, 16, 16};
  LanguageModel model(config_m, TrainSeed::from_u64(3));
  const std::vector<float> before(model.parameters(), model.parameters() + model.parameter_count());
  DpSgdConfig config;
  config.sampling_rate = 0.1;
  config.dataset_size = 100;  // q N = 10
  config.noise_multiplier = 2.0;
  config.clip_norm = 0.5;
  config.learning_rate = 1.0;
  DpSgdTrainer trainer(model, config, TrainSeed::from_u64(4));
  trainer.step(ExampleBatch{});
  const double sd = 2.0 * 0.5 / 10;
  const size_t P = model.parameter_count();
  ASSERT_GT(P, 60000u);
  double sum = 0, sum2 = 0;
  uint64_t within = 0;
  for (size_t k = 0; k < P; ++k) {
    const double delta = static_cast<double>(before[k]) - trainer.model().parameters()[k];
    sum += delta;
    sum2 += delta * delta;
    within += std::abs(delta) < sd;
  }
  const double n = static_cast<double>(P);
  const double mean = sum / n;
  const double variance = (sum2 - n * mean * mean) / (n - 1);
  EXPECT_LT(std::abs(mean), blur_test::kZ1e6 * sd / std::sqrt(n));
  EXPECT_LT(std::abs(variance / (sd * sd) - 1), blur_test::kZ1e6 * std::sqrt(2 / (n - 1)))
      << "empirical sd " << std::sqrt(variance) << " expected " << sd;
  EXPECT_LT(std::abs(blur_test::binomial_z(within, P, 0.682689492)), blur_test::kZ1e6);
}

// The ziggurat sampler against the normal CDF: Pearson's chi-square over 34
// bins (edges -4, -3.75, ..., 4, plus both tails; smallest expectation 32),
// and the mass beyond the ziggurat's tail start r = 3.6542 (drawn by the
// separate tail algorithm) as a binomial count. 1e-6 false alarms each.
TEST(DpSgd, GaussianSamplerMatchesTheNormalDistribution) {
  const GaussianNoise noise(TrainSeed::from_u64(20), "gaussian-test", 0);
  const uint64_t n = 1000000;
  constexpr int kBins = 34;
  uint64_t counts[kBins] = {};
  uint64_t beyond_r = 0;
  auto cdf = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  for (uint64_t i = 0; i < n; ++i) {
    const double z = noise.normal(i);
    int bin = z < -4 ? 0 : z >= 4 ? kBins - 1 : 1 + static_cast<int>((z + 4) / 0.25);
    bin = std::min(bin, kBins - 2 + (z >= 4));
    ++counts[bin];
    beyond_r += std::abs(z) > 3.6541528853610088;
  }
  double probabilities[kBins];
  probabilities[0] = cdf(-4);
  probabilities[kBins - 1] = cdf(-4);
  for (int b = 1; b < kBins - 1; ++b) {
    const double low = -4 + 0.25 * (b - 1);
    probabilities[b] = cdf(low + 0.25) - cdf(low);
  }
  EXPECT_LT(blur_test::chi_square(counts, probabilities, kBins, n),
            blur_test::chi_square_critical_1e6(kBins - 1));
  EXPECT_LT(std::abs(blur_test::binomial_z(beyond_r, n, 2 * cdf(-3.6541528853610088))),
            blur_test::kZ1e6);
}

TEST(DpSgd, NoiseIsAFunctionOfSeedAndStepOnly) {
  LanguageModel model(kSmall, TrainSeed::from_u64(5));
  DpSgdConfig config;
  config.dataset_size = 100;
  config.noise_multiplier = 1;
  config.clip_norm = 1;
  DpSgdTrainer a(model, config, TrainSeed::from_u64(6));
  config.noise_threads = 1;
  DpSgdTrainer b(model, config, TrainSeed::from_u64(6));
  DpSgdTrainer c(model, config, TrainSeed::from_u64(7));
  a.step(ExampleBatch{});
  b.step(ExampleBatch{});
  c.step(ExampleBatch{});
  const size_t bytes = model.parameter_count() * sizeof(float);
  EXPECT_EQ(std::memcmp(a.model().parameters(), b.model().parameters(), bytes), 0);
  EXPECT_NE(std::memcmp(a.model().parameters(), c.model().parameters(), bytes), 0);
}

// The released vector is round(S / s) + Z: the clipped sum S (clip C') on
// the grid s = sigma C / 2^j plus the exact discrete Gaussian draws of
// (seed, "noise", step), all integers; the update is exactly -lr * units *
// s / B (momentum 0), so no float noise reaches the parameters.
TEST(DpSgd, NoisySumIsIntegersOnTheGrid) {
  const auto corpus = counting_corpus(40, kSmall.vocab_size);
  DpSgdConfig config;
  config.sampling_rate = 1.0;
  config.dataset_size = corpus.size();
  config.expected_batch = 32;  // B: the divisor (not the realized 40)
  config.noise_multiplier = 0.7;
  config.clip_norm = 0.5;
  config.learning_rate = 0.25;
  config.noise_threads = 1;
  const LanguageModel initial(kSmall, TrainSeed::from_u64(21));
  const TrainSeed seed = TrainSeed::from_u64(22);
  DpSgdTrainer trainer(initial, config, seed);
  const NoiseGrid grid = trainer.grid();
  const size_t P = initial.parameter_count();
  EXPECT_EQ(grid.log2_sigma, 20u);
  EXPECT_DOUBLE_EQ(grid.step, 0.7 * 0.5 / 1048576.0);
  EXPECT_DOUBLE_EQ(grid.clip_for_sum,
                   0.5 - std::sqrt(double(P)) * grid.step * (1 + std::ldexp(1.0, -20)));

  // The clean clipped sum, computed the same way on a copy of the model.
  LanguageModel copy = initial;
  std::vector<float> sum(P, 0.0f);
  GradientOptions options;
  options.clip_norm = grid.clip_for_sum;
  copy.accumulate_gradient(all_of(corpus), options, sum.data());
  std::vector<int64_t> noise(P);
  DiscreteGaussianNoise(seed, "noise", 0).sample(noise.data(), P, grid.log2_sigma, 1);

  trainer.keep_released_units(true);
  trainer.step(corpus);
  const std::vector<int64_t>& units = trainer.released_units();
  ASSERT_EQ(units.size(), P);
  size_t nonzero_signal = 0;
  for (size_t k = 0; k < P; ++k) {
    const auto rounded = static_cast<int64_t>(
        std::nearbyint(static_cast<double>(sum[k]) * (1.0 / grid.step)));
    ASSERT_EQ(units[k], rounded + noise[k]) << k;
    nonzero_signal += rounded != 0;
    const float expected = initial.parameters()[k] -
                           0.25f * static_cast<float>(double(units[k]) * (grid.step / 32.0));
    ASSERT_EQ(trainer.model().parameters()[k], expected) << k;
  }
  EXPECT_GT(nonzero_signal, P / 2);  // the sum is really there
}

// A NaN inside one example's computation (here: its token's embedding
// column) gives it a NaN norm; clipping must drop it (factor 0), not pass
// it unclipped. The other examples' clipped sum is unchanged and finite,
// and the NaN token's embedding column gets exactly zero.
TEST(DpSgd, NanExampleContributesZero) {
  auto corpus = counting_corpus(12, kSmall.vocab_size);
  for (Example& e : corpus) {
    for (int32_t& w : e) w = w == 19 ? 18 : w;  // token 19 only in the poisoned example
  }
  corpus[5] = {19, 3, 4, 5};
  LanguageModel poisoned(kSmall, TrainSeed::from_u64(23));
  poisoned.block(LanguageModel::kEmbedding)(0, 19) = std::numeric_limits<float>::quiet_NaN();
  LanguageModel clean = poisoned;
  std::vector<Example> without = corpus;
  without.erase(without.begin() + 5);

  GradientOptions options;
  options.clip_norm = 0.3;
  const size_t P = poisoned.parameter_count();
  std::vector<float> with_nan(P, 0.0f), reference(P, 0.0f);
  const BatchGradientStats stats = poisoned.accumulate_gradient(all_of(corpus), options,
                                                                with_nan.data());
  clean.accumulate_gradient(all_of(without), options, reference.data());
  EXPECT_TRUE(std::isnan(stats.norms[5]));
  EXPECT_EQ(stats.clip_factors[5], 0.0);
  const size_t E = static_cast<size_t>(kSmall.embedding_dim);
  for (size_t k = 0; k < P; ++k) {
    ASSERT_TRUE(std::isfinite(with_nan[k])) << k;
    ASSERT_NEAR(with_nan[k], reference[k], 1e-6 + 1e-5 * std::abs(reference[k])) << k;
  }
  for (size_t r = 0; r < E; ++r) EXPECT_EQ(with_nan[19 * E + r], 0.0f);
}

// Batch sizes are Binomial(N, q): over S steps the total is
// Binomial(S N, q); |z| < 4.89 (1e-6).
TEST(DpSgd, PoissonBatchSizesHaveMeanQN) {
  const TrainSeed seed = TrainSeed::from_u64(8);
  const uint64_t N = 1000;
  const double q = 0.05;
  const uint64_t steps = 200;
  uint64_t total = 0;
  for (uint64_t s = 0; s < steps; ++s) {
    const auto sample = poisson_sample(seed, s, N, q);
    for (size_t k = 1; k < sample.size(); ++k) ASSERT_LT(sample[k - 1], sample[k]);
    if (!sample.empty()) {
      ASSERT_LT(sample.back(), N);
    }
    total += sample.size();
  }
  EXPECT_LT(std::abs(blur_test::binomial_z(total, steps * N, q)), blur_test::kZ1e6)
      << "mean batch " << static_cast<double>(total) / steps << " expected " << q * N;
  EXPECT_EQ(poisson_sample(seed, 3, N, q), poisson_sample(seed, 3, N, q));
  EXPECT_NE(poisson_sample(seed, 3, N, q), poisson_sample(seed, 4, N, q));
  EXPECT_EQ(poisson_sample(seed, 0, N, 1.0).size(), N);
}

// Training only some groups: the others keep their values bit for bit;
// the trained coordinates get exactly the update of an all-groups step with
// the same noise (draw i for coordinate i), where the clipping uses each
// example's norm over the trained coordinates only.
TEST(DpSgd, TrainedGroupsOnlyAreClippedNoisedAndUpdated) {
  const auto corpus = counting_corpus(12, kSmall.vocab_size);
  const LanguageModel initial(kSmall, TrainSeed::from_u64(21));
  const ExampleBatch batch{&corpus[1], &corpus[2], &corpus[5], &corpus[9], &corpus[11]};
  const uint32_t trained = kLstmGroup | kOutputGroup;
  auto in_trained = [&](size_t k) {
    for (size_t b = 0; b < initial.blocks().size(); ++b) {
      const ParameterBlock& block = initial.blocks()[b];
      if (k >= block.offset && k < block.offset + block.size()) {
        return (trained & LanguageModel::group_of_block(b)) != 0;
      }
    }
    return false;
  };
  // q 0.5, plain SGD (no momentum), every example clipped at C = 0.05.
  DpSgdConfig config{0.5, corpus.size(), 0, 0.05, 0.5};
  config.expected_batch = 4;

  // Noisy, empty batch: the noise alone, on the trained coordinates only.
  config.noise_multiplier = 1.0;
  DpSgdTrainer all(initial, config, TrainSeed::from_u64(22));
  config.trained_groups = trained;
  DpSgdTrainer some(initial, config, TrainSeed::from_u64(22));
  all.step(ExampleBatch{});
  some.step(ExampleBatch{});
  size_t moved = 0;
  for (size_t k = 0; k < initial.parameter_count(); ++k) {
    const float x = some.model().parameters()[k];
    if (in_trained(k)) {
      ASSERT_EQ(x, all.model().parameters()[k]) << k;
      moved += x != initial.parameters()[k];
    } else {
      ASSERT_EQ(x, initial.parameters()[k]) << k;
    }
  }
  EXPECT_GT(moved, initial.parameter_count() / 2);

  // Clipped, no noise: sum_j min(1, C / ||g_j on the trained groups||) g_j.
  config.noise_multiplier = 0;
  DpSgdTrainer clipped(initial, config, TrainSeed::from_u64(22));
  const DpSgdStepStats stats = clipped.step(batch);
  EXPECT_EQ(stats.clipped, batch.size());  // C is small: every example clips
  LanguageModel reference = initial;
  std::vector<double> expected(initial.parameter_count(), 0.0);
  for (const Example* e : batch) {
    std::vector<float> g(initial.parameter_count(), 0.0f);
    reference.accumulate_gradient({e}, GradientOptions{}, g.data());
    double squares = 0;
    for (size_t k = 0; k < g.size(); ++k) {
      if (in_trained(k)) squares += static_cast<double>(g[k]) * g[k];
    }
    const double factor = std::min(1.0, config.clip_norm / std::sqrt(squares));
    for (size_t k = 0; k < g.size(); ++k) expected[k] += factor * g[k];
  }
  // The updates compared as vectors (float parameters round each one).
  double error2 = 0, want2 = 0;
  for (size_t k = 0; k < initial.parameter_count(); ++k) {
    const double update = static_cast<double>(clipped.model().parameters()[k]) -
                          static_cast<double>(initial.parameters()[k]);
    if (!in_trained(k)) {
      ASSERT_EQ(update, 0.0) << k;
      continue;
    }
    const double want = -0.5 * expected[k] / 4;
    error2 += (update - want) * (update - want);
    want2 += want * want;
  }
  ASSERT_GT(want2, 0);
  EXPECT_LT(std::sqrt(error2 / want2), 1e-4);
}

TEST(DpSgd, TrainedGroupsParseAndValidate) {
  EXPECT_EQ(parse_trained_groups("all"), uint32_t{kAllGroups});
  EXPECT_EQ(parse_trained_groups("lstm,output"), uint32_t{kLstmGroup | kOutputGroup});
  EXPECT_EQ(parse_trained_groups("output"), uint32_t{kOutputGroup});
  EXPECT_EQ(trained_group_names(kLstmGroup | kOutputGroup), "lstm,output");
  EXPECT_EQ(trained_group_names(kAllGroups), "all");
  EXPECT_THROW(parse_trained_groups("output,softmax"), std::invalid_argument);
  EXPECT_THROW(parse_trained_groups(""), std::invalid_argument);
  DpSgdConfig c;
  c.dataset_size = 10;
  c.trained_groups = 0;
  EXPECT_THROW(validate(c), std::invalid_argument);
  c.trained_groups = 8;
  EXPECT_THROW(validate(c), std::invalid_argument);
}

TEST(DpSgd, CheckpointResumeIsBitIdentical) {
  const auto corpus = counting_corpus(60, kSmall.vocab_size);
  DpSgdConfig config;
  config.sampling_rate = 0.2;
  config.dataset_size = corpus.size();
  config.noise_multiplier = 1.0;
  config.clip_norm = 0.5;
  config.learning_rate = 0.5;
  config.momentum = 0.9;
  const LanguageModel initial(kSmall, TrainSeed::from_u64(9));
  const TrainSeed seed = TrainSeed::from_u64(10);

  DpSgdTrainer uninterrupted(initial, config, seed);
  for (int s = 0; s < 6; ++s) uninterrupted.step(corpus);

  const std::string path = ::testing::TempDir() + "dp_sgd_checkpoint.bin";
  {
    DpSgdTrainer first_half(initial, config, seed);
    for (int s = 0; s < 3; ++s) first_half.step(corpus);
    first_half.save_checkpoint(path, "{\"plan\": 1}");
  }
  std::string plan;
  DpSgdTrainer resumed = DpSgdTrainer::load_checkpoint(path, &plan);
  EXPECT_EQ(resumed.step_index(), 3u);
  EXPECT_EQ(plan, "{\"plan\": 1}");
  for (int s = 0; s < 3; ++s) resumed.step(corpus);

  const size_t P = initial.parameter_count();
  EXPECT_EQ(std::memcmp(resumed.model().parameters(), uninterrupted.model().parameters(),
                        P * sizeof(float)),
            0);
  EXPECT_EQ(resumed.velocity(), uninterrupted.velocity());
  EXPECT_EQ(resumed.step_index(), uninterrupted.step_index());

  // A flipped byte is refused.
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  bytes[bytes.size() / 2] ^= 1;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  EXPECT_THROW(DpSgdTrainer::load_checkpoint(path), std::runtime_error);
  std::remove(path.c_str());
}

// Toy-language convergence. Initial loss is about ln 20 = 3.0; a model that
// learned "next = current + 1" gets close to 0 (the first word of a sentence
// is unpredictable, but every prediction here is conditioned on it).
void expect_learns(double sigma, double clip) {
  const auto corpus = counting_corpus(200, kSmall.vocab_size);
  DpSgdConfig config;
  config.sampling_rate = 0.1;  // qN = 20
  config.dataset_size = corpus.size();
  config.noise_multiplier = sigma;
  config.clip_norm = clip;
  config.learning_rate = 0.5;
  config.momentum = 0.9;
  DpSgdTrainer trainer(LanguageModel(kSmall, TrainSeed::from_u64(11)), config,
                       TrainSeed::from_u64(12));
  const double initial = mean_loss(trainer.model(), corpus);
  for (int s = 0; s < 300; ++s) trainer.step(corpus);
  const double final_loss = mean_loss(trainer.model(), corpus);
  EXPECT_GT(initial, 2.5);
  EXPECT_LT(final_loss, 0.5) << "initial " << initial;
}

TEST(DpSgd, NonPrivateTrainingLearnsTheToyLanguage) {
  expect_learns(0, std::numeric_limits<double>::infinity());
}

TEST(DpSgd, PrivateTrainingWithSmallNoiseLearnsTheToyLanguage) { expect_learns(0.3, 1.0); }

}  // namespace
}  // namespace blur::trainer
