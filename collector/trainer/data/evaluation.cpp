#include "trainer/data/evaluation.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace blur::trainer {

namespace {

constexpr int32_t kPad = 0;

// log(sum exp(logits)), stable.
double log_sum_exp(const float* logits, size_t n) {
  const float largest = *std::max_element(logits, logits + n);
  double sum = 0;
  for (size_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(logits[i] - largest));
  return largest + std::log(sum);
}

// Ranks of the best three word ids (lowest id first on ties).
void best_three(const float* logits, size_t n, int32_t first_word, int32_t best[3]) {
  best[0] = best[1] = best[2] = -1;
  for (size_t i = static_cast<size_t>(first_word); i < n; ++i) {
    const int32_t id = static_cast<int32_t>(i);
    for (int slot = 0; slot < 3; ++slot) {
      if (best[slot] < 0 || logits[i] > logits[best[slot]]) {
        for (int k = 2; k > slot; --k) best[k] = best[k - 1];
        best[slot] = id;
        break;
      }
    }
  }
}

EvaluationResult finish(uint64_t top1, uint64_t top3, double cross_entropy, uint64_t words,
                        uint64_t all) {
  EvaluationResult r;
  r.word_targets = words;
  r.all_targets = all;
  r.top1 = words == 0 ? 0 : static_cast<double>(top1) / static_cast<double>(words);
  r.top3 = words == 0 ? 0 : static_cast<double>(top3) / static_cast<double>(words);
  r.perplexity = all == 0 ? 0 : std::exp(cross_entropy / static_cast<double>(all));
  return r;
}

}  // namespace

EvaluationResult evaluate_model(const std::vector<TokenSequence>& sequences, size_t vocab_size,
                                int32_t first_word, const SequenceForward& forward) {
  uint64_t top1 = 0, top3 = 0, words = 0, all = 0;
  double cross_entropy = 0;
  for (const TokenSequence& tokens : sequences) {
    if (tokens.size() < 2) continue;
    forward(tokens, [&](size_t t, const float* logits) {
      const int32_t target = tokens.at(t + 1);
      if (target == kPad) return;
      ++all;
      cross_entropy += log_sum_exp(logits, vocab_size) - logits[target];
      if (target < first_word) return;
      ++words;
      int32_t best[3];
      best_three(logits, vocab_size, first_word, best);
      top1 += best[0] == target;
      top3 += best[0] == target || best[1] == target || best[2] == target;
    });
  }
  return finish(top1, top3, cross_entropy, words, all);
}

EvaluationResult evaluate_unigram(const std::vector<TokenSequence>& train,
                                  const std::vector<TokenSequence>& test, size_t vocab_size,
                                  int32_t first_word) {
  std::vector<double> counts(vocab_size, 1.0);  // add-one
  for (const TokenSequence& tokens : train) {
    for (size_t t = 1; t < tokens.size(); ++t) {
      if (tokens[t] != kPad) counts.at(static_cast<size_t>(tokens[t])) += 1;
    }
  }
  counts[kPad] = 0;
  double total = 0;
  for (double c : counts) total += c;
  std::vector<float> logits(vocab_size);
  for (size_t i = 0; i < vocab_size; ++i) {
    logits[i] = counts[i] == 0 ? -1e30f : static_cast<float>(std::log(counts[i] / total));
  }
  return evaluate_model(test, vocab_size, first_word,
                        [&](const TokenSequence& tokens, const LogitsVisitor& visit) {
                          for (size_t t = 0; t + 1 < tokens.size(); ++t) visit(t, logits.data());
                        });
}

double sequence_log_perplexity(const TokenSequence& tokens, size_t vocab_size,
                               const SequenceForward& forward) {
  double total = 0;
  forward(tokens, [&](size_t t, const float* logits) {
    total += log_sum_exp(logits, vocab_size) - logits[tokens.at(t + 1)];
  });
  return total;
}

ExposureResult canary_exposure(const TokenSequence& canary,
                               const std::vector<TokenSequence>& others, size_t vocab_size,
                               const SequenceForward& forward) {
  if (others.empty()) throw std::invalid_argument("canary exposure needs other candidates");
  const double score = sequence_log_perplexity(canary, vocab_size, forward);
  uint64_t rank = 1;
  for (const TokenSequence& other : others) {
    if (sequence_log_perplexity(other, vocab_size, forward) <= score) ++rank;
  }
  ExposureResult r;
  r.rank = rank;
  r.candidates = others.size() + 1;
  r.exposure = std::log2(static_cast<double>(r.candidates)) - std::log2(static_cast<double>(rank));
  return r;
}

}  // namespace blur::trainer
