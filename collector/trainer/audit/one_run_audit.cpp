#include "trainer/audit/one_run_audit.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "trainer/accountants/rdp_accountant.h"
#include "trainer/audit/epsilon_lower_bound.h"
#include "trainer/dpsgd/dp_sgd.h"
#include "trainer/random/drbg_stream.h"

namespace blur::trainer {

namespace {

// w_{t+1} = w_t + 1 (mod V) from varying starts: text the model can learn
// without memorizing any one unit.
std::vector<Example> counting_language(uint32_t units, int32_t vocab) {
  std::vector<Example> out;
  for (uint32_t i = 0; i < units; ++i) {
    Example e;
    const auto start = static_cast<int32_t>((i * 7u) % static_cast<uint32_t>(vocab));
    for (uint32_t t = 0; t < 6 + i % 7; ++t) {
      e.push_back((start + static_cast<int32_t>(t)) % vocab);
    }
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<double> losses_of(LanguageModel& model, const std::vector<Example>& examples) {
  ExampleBatch batch;
  for (const Example& e : examples) batch.push_back(&e);
  return model.losses(batch);
}

}  // namespace

OneRunAuditResult run_one_run_audit(const OneRunAuditConfig& c) {
  if (c.canaries < 2 || c.guesses > c.canaries || c.guesses % 2 != 0 || c.canary_tokens < 2 ||
      !(c.epsilon > 0) || !(c.sampling_rate > 0 && c.sampling_rate <= 1) || !(c.epochs > 0)) {
    throw std::invalid_argument(
        "audit: need >= 2 canaries, an even number of guesses <= canaries, canaries of >= 2 "
        "tokens, epsilon > 0, q in (0, 1], epochs > 0");
  }
  const TrainSeed seed = TrainSeed::from_u64(c.seed);
  const int32_t V = c.model.vocab_size;

  // Canaries (uniform words) and their coins.
  std::vector<Example> canaries(c.canaries);
  std::vector<bool> included(c.canaries);
  {
    DrbgStream words(seed, "audit-canaries", 0);
    DrbgStream coins(seed, "audit-coins", 0);
    // Uniform in [0, V) by rejection (no modulo bias).
    const uint64_t span = static_cast<uint64_t>(V);
    const uint64_t limit = UINT64_MAX - UINT64_MAX % span;
    auto word = [&] {
      uint64_t x;
      do {
        x = words.next_u64();
      } while (x >= limit);
      return static_cast<int32_t>(x / (limit / span));
    };
    for (uint32_t i = 0; i < c.canaries; ++i) {
      for (uint32_t t = 0; t < c.canary_tokens; ++t) canaries[i].push_back(word());
      included[i] = coins.bernoulli(0.5);
    }
  }
  std::vector<Example> dataset = counting_language(c.background, V);
  OneRunAuditResult result;
  result.canaries = c.canaries;
  for (uint32_t i = 0; i < c.canaries; ++i) {
    if (included[i]) {
      dataset.push_back(canaries[i]);
      ++result.included;
    }
  }

  // DP-SGD at the target epsilon (the divisor is the public expected
  // batch, q (background + m/2), not the coins' realized count).
  const double q = c.sampling_rate;
  result.steps = static_cast<uint64_t>(std::ceil(c.epochs / q));
  const bool is_private = std::isfinite(c.epsilon);
  if (is_private) {
    auto epsilon_of = [&](double sigma) {
      RdpAccountant accountant;
      accountant.add(q, sigma, result.steps);
      return accountant.epsilon(c.delta).epsilon;
    };
    result.noise_multiplier = calibrate_noise_multiplier(epsilon_of, c.epsilon);
    result.accountant_epsilon = epsilon_of(result.noise_multiplier);
  }
  DpSgdConfig dp;
  dp.sampling_rate = q;
  dp.dataset_size = dataset.size();
  dp.expected_batch = q * (c.background + 0.5 * c.canaries);
  dp.noise_multiplier = result.noise_multiplier;
  dp.clip_norm = is_private ? c.clip_norm : std::numeric_limits<double>::infinity();
  dp.learning_rate = c.learning_rate;
  dp.momentum = c.momentum;
  LanguageModel initial(c.model, seed);
  const std::vector<double> before = losses_of(initial, canaries);
  DpSgdTrainer trainer(initial, dp, seed);
  while (trainer.step_index() < result.steps) trainer.step(dataset);
  const std::vector<double> after = losses_of(trainer.model(), canaries);

  // Lowest score (loss dropped most): "included"; highest: "excluded".
  std::vector<uint32_t> order(c.canaries);
  std::iota(order.begin(), order.end(), 0u);
  auto score = [&](uint32_t i) {
    const double s = after[i] - before[i];
    return std::isfinite(s) ? s : std::numeric_limits<double>::infinity();
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return score(a) < score(b); });
  const uint32_t half = c.guesses / 2;
  for (uint32_t k = 0; k < half; ++k) {
    result.correct += included[order[k]];
    result.correct += !included[order[c.canaries - 1 - k]];
  }
  result.guesses = c.guesses;
  result.epsilon_lower = one_run_epsilon_lower_bound(c.canaries, result.guesses, result.correct,
                                                     c.delta, c.confidence);
  return result;
}

}  // namespace blur::trainer
