// The LSTM language model: gradients against finite differences (double),
// exact ghost per-example norms against materialized per-example gradients,
// the clipped sum, repeated tokens, sparsity of the embedding gradient.
#include "trainer/model/language_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "trainer/model/parallel.h"

namespace blur::trainer {
namespace {

using ModelD = LanguageModelT<double>;

const LanguageModelConfig kTiny{11, 4, 3};

// Examples of different lengths: repeated tokens, a one-token example (no
// predictions) and an empty one.
std::vector<Example> tiny_examples() {
  return {{1, 2, 3, 2, 2, 7}, {4, 4, 4, 4}, {5}, {10, 0, 9}, {}, {3, 6, 6, 1, 8, 8, 2, 0}};
}

ExampleBatch pointers(const std::vector<Example>& examples) {
  ExampleBatch batch;
  for (const Example& e : examples) batch.push_back(&e);
  return batch;
}

double total_loss(ModelD& model, const ExampleBatch& batch) {
  double total = 0;
  for (double l : model.losses(batch)) total += l;
  return total;
}

// Dense gradient of one example alone, materialized (no clipping).
std::vector<double> single_gradient(ModelD& model, const Example& example) {
  std::vector<double> g(model.parameter_count(), 0.0);
  model.accumulate_gradient({&example}, GradientOptions{}, g.data());
  return g;
}

double norm(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

// The batch is split into one share per worker thread; the shares' sums
// are added in share order. Any worker count gives the same losses, norms,
// clip factors and clipped sum up to rounding (double: 1e-12 relative),
// including splits with an empty share (6 examples over 4 and 5 workers).
TEST(LanguageModel, WorkerCountChangesOnlyRounding) {
  const std::vector<Example> examples = tiny_examples();
  GradientOptions options;
  options.clip_norm = 0.5;
  struct Result {
    std::vector<double> losses, norms, factors, gradient;
  };
  auto run = [&](size_t workers) {
    set_worker_threads(workers);
    ModelD model(kTiny, TrainSeed::from_u64(12));
    Result r;
    r.gradient.assign(model.parameter_count(), 0.0);
    const BatchGradientStats stats =
        model.accumulate_gradient(pointers(examples), options, r.gradient.data());
    r.losses = model.losses(pointers(examples));
    r.norms = stats.norms;
    r.factors = stats.clip_factors;
    set_worker_threads(0);
    return r;
  };
  const Result one = run(1);
  for (size_t workers : {2, 3, 4, 5, 8}) {
    const Result many = run(workers);
    ASSERT_EQ(many.losses.size(), one.losses.size());
    for (size_t j = 0; j < one.losses.size(); ++j) {
      EXPECT_NEAR(many.losses[j], one.losses[j], 1e-12 * (1 + std::abs(one.losses[j])));
      EXPECT_NEAR(many.norms[j], one.norms[j], 1e-12 * (1 + one.norms[j]));
      EXPECT_NEAR(many.factors[j], one.factors[j], 1e-12);
    }
    for (size_t k = 0; k < one.gradient.size(); ++k) {
      ASSERT_NEAR(many.gradient[k], one.gradient[k], 1e-12) << "workers " << workers << " k " << k;
    }
  }
  // The same worker count twice: bit-identical.
  const Result again = run(3), third = run(3);
  EXPECT_EQ(again.gradient, third.gradient);
}

TEST(LanguageModel, InitialLossIsNearUniform) {
  LanguageModel model({8000, 96, 192}, TrainSeed::from_u64(1));
  const Example example{1, 2, 3, 4, 5, 6, 7, 8};
  const double loss = model.losses({&example})[0];
  EXPECT_NEAR(loss, std::log(8000.0), 0.2);
}

TEST(LanguageModel, InitializationIsDeterministic) {
  LanguageModel a(kTiny, TrainSeed::from_u64(3)), b(kTiny, TrainSeed::from_u64(3)),
      c(kTiny, TrainSeed::from_u64(4));
  for (size_t k = 0; k < a.parameter_count(); ++k) ASSERT_EQ(a.parameters()[k], b.parameters()[k]);
  size_t same = 0;
  for (size_t k = 0; k < a.parameter_count(); ++k) same += a.parameters()[k] == c.parameters()[k];
  EXPECT_LT(same, a.parameter_count() / 2);  // biases are fixed, weights differ
}

TEST(LanguageModel, RejectsTokensOutsideTheVocabulary) {
  ModelD model(kTiny, TrainSeed::from_u64(1));
  const Example bad{1, 11};
  const Example negative{-1, 2};
  EXPECT_THROW(model.losses({&bad}), std::invalid_argument);
  EXPECT_THROW(model.losses({&negative}), std::invalid_argument);
}

// Central differences in double for every parameter of every block:
// truncation error O(h^2) ~ 1e-12, rounding ~ 1e-16 / h ~ 1e-11.
TEST(LanguageModel, GradientMatchesFiniteDifferencesForEveryBlock) {
  ModelD model(kTiny, TrainSeed::from_u64(7));
  // Perturb the biases so no block is at a special point.
  for (size_t k = 0; k < model.parameter_count(); ++k) {
    model.parameters()[k] += 0.05 * std::sin(static_cast<double>(k));
  }
  const auto examples = tiny_examples();
  const ExampleBatch batch = pointers(examples);
  std::vector<double> gradient(model.parameter_count(), 0.0);
  model.accumulate_gradient(batch, GradientOptions{}, gradient.data());
  const double h = 1e-5;
  for (const ParameterBlock& block : model.blocks()) {
    double worst = 0, largest = 0;
    for (size_t k = block.offset; k < block.offset + block.size(); ++k) {
      double& p = model.parameters()[k];
      const double saved = p;
      p = saved + h;
      const double up = total_loss(model, batch);
      p = saved - h;
      const double down = total_loss(model, batch);
      p = saved;
      const double numeric = (up - down) / (2 * h);
      worst = std::max(worst, std::abs(numeric - gradient[k]));
      largest = std::max(largest, std::abs(gradient[k]));
    }
    EXPECT_LT(worst, 1e-8) << block.name;
    EXPECT_GT(largest, 1e-3) << block.name << ": gradient vanishes, the check would be vacuous";
  }
}

TEST(LanguageModel, GhostNormsEqualMaterializedPerExampleNorms) {
  ModelD model(kTiny, TrainSeed::from_u64(9));
  const auto examples = tiny_examples();
  std::vector<double> sink(model.parameter_count(), 0.0);
  GradientOptions options;
  options.compute_norms = true;
  const BatchGradientStats stats =
      model.accumulate_gradient(pointers(examples), options, sink.data());
  ASSERT_EQ(stats.norms.size(), examples.size());
  for (size_t j = 0; j < examples.size(); ++j) {
    const double naive = norm(single_gradient(model, examples[j]));
    EXPECT_NEAR(stats.norms[j], naive, 1e-12 * (1 + naive)) << "example " << j;
    EXPECT_EQ(stats.clip_factors[j], 1.0);
  }
  EXPECT_EQ(stats.norms[2], 0.0);  // one token: no prediction, no gradient
  EXPECT_EQ(stats.norms[4], 0.0);
}

// With norm_groups, each norm covers those groups' coordinates only (the
// parameters a DP step that trains only them releases): every non-empty
// subset against the materialized gradient restricted to its blocks.
TEST(LanguageModel, GhostNormsCoverTheNormGroupsOnly) {
  ModelD model(kTiny, TrainSeed::from_u64(9));
  const auto examples = tiny_examples();
  for (uint32_t groups = 1; groups <= kAllGroups; ++groups) {
    std::vector<double> sink(model.parameter_count(), 0.0);
    GradientOptions options;
    options.compute_norms = true;
    options.norm_groups = groups;
    const BatchGradientStats stats =
        model.accumulate_gradient(pointers(examples), options, sink.data());
    for (size_t j = 0; j < examples.size(); ++j) {
      const std::vector<double> g = single_gradient(model, examples[j]);
      double squares = 0;
      for (size_t b = 0; b < model.blocks().size(); ++b) {
        if (!(groups & ModelD::group_of_block(b))) continue;
        const ParameterBlock& block = model.blocks()[b];
        for (size_t k = block.offset; k < block.offset + block.size(); ++k) squares += g[k] * g[k];
      }
      const double naive = std::sqrt(squares);
      EXPECT_NEAR(stats.norms[j], naive, 1e-12 * (1 + naive))
          << "groups " << groups << " example " << j;
      if (examples[j].size() > 1) {
        EXPECT_GT(naive, 0) << "groups " << groups;
      }
    }
  }
}

// Float model: same identity up to float rounding of the gradient itself.
TEST(LanguageModel, GhostNormsInFloatMatchDoubleReference) {
  const LanguageModelConfig config{300, 16, 24};
  LanguageModel model(config, TrainSeed::from_u64(5));
  ModelD reference(config);
  for (size_t k = 0; k < model.parameter_count(); ++k) {
    reference.parameters()[k] = model.parameters()[k];
  }
  std::vector<Example> examples;
  for (int j = 0; j < 6; ++j) {
    Example e;
    for (int t = 0; t < 5 + 3 * j; ++t) e.push_back((j * 37 + t * t * 11) % 300);
    examples.push_back(e);
  }
  std::vector<float> sink(model.parameter_count(), 0.0f);
  GradientOptions options;
  options.compute_norms = true;
  const auto stats = model.accumulate_gradient(pointers(examples), options, sink.data());
  for (size_t j = 0; j < examples.size(); ++j) {
    const double naive = norm(single_gradient(reference, examples[j]));
    EXPECT_NEAR(stats.norms[j], naive, 1e-4 * naive) << "example " << j;
  }
}

TEST(LanguageModel, ClippedSumEqualsSumOfClippedPerExampleGradients) {
  ModelD model(kTiny, TrainSeed::from_u64(11));
  const auto examples = tiny_examples();
  std::vector<std::vector<double>> singles;
  std::vector<double> norms;
  for (const Example& e : examples) {
    singles.push_back(single_gradient(model, e));
    norms.push_back(norm(singles.back()));
  }
  // A clip norm below some per-example norms and above others.
  std::vector<double> positive;
  for (double n : norms) {
    if (n > 0) positive.push_back(n);
  }
  std::sort(positive.begin(), positive.end());
  ASSERT_GE(positive.size(), 3u);
  const double clip = positive[positive.size() / 2];
  std::vector<double> expected(model.parameter_count(), 0.0);
  size_t clipped = 0;
  for (size_t j = 0; j < examples.size(); ++j) {
    const double factor = norms[j] > clip ? clip / norms[j] : 1.0;
    clipped += factor < 1;
    for (size_t k = 0; k < expected.size(); ++k) expected[k] += factor * singles[j][k];
  }
  ASSERT_GE(clipped, 1u);
  std::vector<double> actual(model.parameter_count(), 0.0);
  GradientOptions options;
  options.clip_norm = clip;
  const auto stats = model.accumulate_gradient(pointers(examples), options, actual.data());
  for (size_t k = 0; k < expected.size(); ++k) {
    ASSERT_NEAR(actual[k], expected[k], 1e-12 * (1 + std::abs(expected[k]))) << "coordinate " << k;
  }
  for (size_t j = 0; j < examples.size(); ++j) {
    EXPECT_NEAR(stats.clip_factors[j], norms[j] > clip ? clip / norms[j] : 1.0, 1e-12);
  }
  // Without clipping the batch gradient is the plain sum.
  std::vector<double> plain(model.parameter_count(), 0.0);
  model.accumulate_gradient(pointers(examples), GradientOptions{}, plain.data());
  for (size_t k = 0; k < plain.size(); ++k) {
    double sum = 0;
    for (const auto& s : singles) sum += s[k];
    ASSERT_NEAR(plain[k], sum, 1e-12 * (1 + std::abs(sum)));
  }
}

// A token repeated in an example contributes ONE embedding row, the sum of
// its occurrences' gradients; the norm is taken after summing. The dense
// per-example gradient sums by construction; the ghost norm must agree.
TEST(LanguageModel, RepeatedTokensAreSummedBeforeTheNorm) {
  ModelD model(kTiny, TrainSeed::from_u64(13));
  const std::vector<Example> examples{{2, 2, 2, 2, 2, 2, 2}, {1, 2, 1, 2, 1, 2, 1, 2}, {6, 6}};
  GradientOptions options;
  options.compute_norms = true;
  std::vector<double> sink(model.parameter_count(), 0.0);
  const auto stats = model.accumulate_gradient(pointers(examples), options, sink.data());
  const ParameterBlock& emb = model.blocks()[ModelD::kEmbedding];
  for (size_t j = 0; j < examples.size(); ++j) {
    const auto g = single_gradient(model, examples[j]);
    EXPECT_NEAR(stats.norms[j], norm(g), 1e-12 * (1 + norm(g)));
    // Sparse: rows of tokens that are not inputs of the example are zero.
    for (int32_t token = 0; token < kTiny.vocab_size; ++token) {
      bool input = false;
      for (size_t t = 0; t + 1 < examples[j].size(); ++t) input |= examples[j][t] == token;
      double row = 0;
      for (int32_t r = 0; r < kTiny.embedding_dim; ++r) {
        row += std::abs(g[emb.offset + static_cast<size_t>(token * kTiny.embedding_dim + r)]);
      }
      if (input) {
        EXPECT_GT(row, 0) << "example " << j << " token " << token;
      } else {
        EXPECT_EQ(row, 0) << "example " << j << " token " << token;
      }
    }
  }
  // Summing before the norm matters. Give token 9 the embedding of token
  // 6: {6, 6, 3} and {9, 6, 3} then have identical forward passes and
  // targets, and differ only in the embedding gradient: one row dx_0 + dx_1
  // versus two rows dx_0 and dx_1. Their squared norms differ by
  // 2 dx_0 . dx_1, which an implementation taking norms per occurrence
  // would miss (it would return equal norms).
  ModelD tied = model;
  tied.block(ModelD::kEmbedding).col(9) = tied.block(ModelD::kEmbedding).col(6);
  const std::vector<Example> pair{{6, 6, 3}, {9, 6, 3}};
  std::vector<double> sink2(tied.parameter_count(), 0.0);
  const auto pair_stats = tied.accumulate_gradient(pointers(pair), options, sink2.data());
  const auto g_repeated = single_gradient(tied, pair[0]);
  const auto g_split = single_gradient(tied, pair[1]);
  const double n_repeated = norm(g_repeated), n_split = norm(g_split);
  EXPECT_NEAR(pair_stats.norms[0], n_repeated, 1e-12 * n_repeated);
  EXPECT_NEAR(pair_stats.norms[1], n_split, 1e-12 * n_split);
  double cross = 0;  // dx_0 . dx_1 = row 9 . row 6 of the split example
  for (int32_t r = 0; r < kTiny.embedding_dim; ++r) {
    cross += g_split[emb.offset + static_cast<size_t>(9 * kTiny.embedding_dim + r)] *
             g_split[emb.offset + static_cast<size_t>(6 * kTiny.embedding_dim + r)];
  }
  const double difference =
      pair_stats.norms[0] * pair_stats.norms[0] - pair_stats.norms[1] * pair_stats.norms[1];
  EXPECT_GT(std::abs(cross), 1e-6);
  EXPECT_NEAR(difference, 2 * cross, 1e-10);
}

}  // namespace
}  // namespace blur::trainer
