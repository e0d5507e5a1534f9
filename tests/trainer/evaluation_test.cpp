// Next-word metrics, the unigram baseline and canary exposure, on models
// whose right answers are known in closed form.
#include "trainer/data/evaluation.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using blur::trainer::LogitsVisitor;
using blur::trainer::TokenSequence;

constexpr size_t kVocab = 20;
constexpr int32_t kFirstWord = 4;

// After token t the model gives the successor word s(t) probability 1/2 and
// spreads the rest uniformly: s(t) = t + 1 among words, wrapping to 4.
int32_t successor(int32_t t) { return t + 1 < static_cast<int32_t>(kVocab) ? t + 1 : kFirstWord; }

void successor_model(const TokenSequence& tokens, const LogitsVisitor& visit) {
  std::vector<float> logits(kVocab);
  for (size_t t = 0; t + 1 < tokens.size(); ++t) {
    const double rest = 0.5 / (kVocab - 1);
    for (size_t i = 0; i < kVocab; ++i) logits[i] = static_cast<float>(std::log(rest));
    logits[successor(tokens[t])] = static_cast<float>(std::log(0.5));
    // A small preference for s(s(t)) and s(s(s(t))) orders the runners-up.
    logits[successor(successor(tokens[t]))] += 0.002f;
    logits[successor(successor(successor(tokens[t])))] += 0.001f;
    visit(t, logits.data());
  }
}

TEST(Evaluation, AccuracyAndPerplexityOfAKnownModel) {
  // Successor runs: every target is the model's first choice.
  const std::vector<TokenSequence> runs = {{4, 5, 6, 7, 8}, {10, 11, 12, 13}};
  auto r = blur::trainer::evaluate_model(runs, kVocab, kFirstWord, successor_model);
  EXPECT_EQ(r.word_targets, 7u);
  EXPECT_DOUBLE_EQ(r.top1, 1.0);
  EXPECT_DOUBLE_EQ(r.top3, 1.0);
  EXPECT_NEAR(r.perplexity, 2.0, 1e-3);  // -ln(1/2) per target
  // Jumps of two: never first, always in the top three.
  r = blur::trainer::evaluate_model({{4, 6, 8, 10}}, kVocab, kFirstWord, successor_model);
  EXPECT_DOUBLE_EQ(r.top1, 0.0);
  EXPECT_DOUBLE_EQ(r.top3, 1.0);
  // Specials are targets for perplexity only; <pad> for nothing.
  r = blur::trainer::evaluate_model({{2, 4, 1, 5, 3, 0}}, kVocab, kFirstWord, successor_model);
  EXPECT_EQ(r.word_targets, 2u);  // 4, 5
  EXPECT_EQ(r.all_targets, 4u);   // 4, <unk>, 5, </s>
}

TEST(Evaluation, UnigramBaseline) {
  const std::vector<TokenSequence> train = {{2, 7, 7, 7, 9, 9, 5, 3}};
  const std::vector<TokenSequence> test = {{2, 7, 9, 5, 6, 3}};
  const auto r = blur::trainer::evaluate_unigram(train, test, kVocab, kFirstWord);
  EXPECT_EQ(r.word_targets, 4u);
  EXPECT_DOUBLE_EQ(r.top1, 0.25);  // always 7
  EXPECT_DOUBLE_EQ(r.top3, 0.75);  // 7, 9, 5
  // Add-one counts: 7 -> 4, 9 -> 3, 5 -> 2, 3 -> 2, 6 -> 1, the rest 1 (<pad> excluded): 26.
  const double expected = std::exp(-(std::log(4.0 / 26) + std::log(3.0 / 26) + std::log(2.0 / 26) +
                                     std::log(1.0 / 26) + std::log(2.0 / 26)) /
                                   5);
  EXPECT_NEAR(r.perplexity, expected, 1e-6 * expected);  // float logits
}

TEST(Evaluation, CanaryExposure) {
  // The successor model "memorized" the run 4 5 6 7: it ranks first among
  // other fillings, exposure = log2 R.
  std::vector<TokenSequence> others;
  for (int32_t a = 4; a < 20; ++a) {
    for (int32_t b = 4; b < 20; ++b) {
      if (a == 6 && b == 7) continue;
      others.push_back({4, 5, a, b});
    }
  }
  const TokenSequence canary = {4, 5, 6, 7};
  auto r = blur::trainer::canary_exposure(canary, others, kVocab, successor_model);
  EXPECT_EQ(r.candidates, 256u);
  EXPECT_EQ(r.rank, 1u);
  EXPECT_DOUBLE_EQ(r.exposure, 8.0);
  // A filling the model finds unremarkable sits mid-pack: (a, b) with a, b
  // not successors ties with most others and ranks last among the ties.
  r = blur::trainer::canary_exposure({4, 5, 12, 4}, others, kVocab, successor_model);
  EXPECT_GT(r.rank, 200u);
  EXPECT_LT(r.exposure, 0.4);
}

}  // namespace
