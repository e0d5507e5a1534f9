// grow_vocabulary: the public model + the fleet's new words, starting from
// exactly the public model's predictions.
#include "trainer/model/vocabulary_growth.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace blur::trainer {
namespace {

TrainedModel public_model() {
  const Vocabulary vocabulary = Vocabulary::from_words({"the", "cat", "sat", "on", "mat"});
  LanguageModel model(LanguageModelConfig{static_cast<int32_t>(vocabulary.size()), 4, 3},
                      TrainSeed::from_u64(3));
  // Give <unk>'s output row and bias something to copy.
  model.block(LanguageModel::kOutputBias)(Vocabulary::kUnknown, 0) = 0.7f;
  return TrainedModel{vocabulary, std::move(model), "{}"};
}

// Softmax over the model's output at the last position of `tokens`.
std::vector<double> next_word_probabilities(const TrainedModel& trained,
                                            const TokenSequence& tokens) {
  std::vector<double> p;
  model_forward(trained.model)(tokens, [&](size_t t, const float* logits) {
    if (t + 2 != tokens.size()) return;
    const size_t v = trained.vocabulary.size();
    double total = 0;
    p.assign(v, 0.0);
    for (size_t w = 0; w < v; ++w) total += p[w] = std::exp(static_cast<double>(logits[w]));
    for (double& x : p) x /= total;
  });
  return p;
}

TEST(VocabularyGrowth, AddsOnlyTheNewWordsInOrderOnce) {
  const TrainedModel before = public_model();
  const GrownModel grown =
      grow_vocabulary(before, {"cat", "dog", "the", "emu", "dog", "", "mat", "yak"});
  EXPECT_EQ(grown.added, (std::vector<std::string>{"dog", "emu", "yak"}));
  const Vocabulary& v = grown.trained.vocabulary;
  ASSERT_EQ(v.size(), before.vocabulary.size() + 3);
  for (size_t i = 0; i < before.vocabulary.size(); ++i) {
    EXPECT_EQ(v.words()[i], before.vocabulary.words()[i]) << "ids of known words are kept";
  }
  EXPECT_EQ(v.id("dog"), static_cast<int32_t>(before.vocabulary.size()));
  EXPECT_EQ(grown.trained.model.config().vocab_size, static_cast<int32_t>(v.size()));
}

TEST(VocabularyGrowth, KnownWordsKeepTheirProbabilityAndUnknownsShareTheirs) {
  const TrainedModel before = public_model();
  const GrownModel grown = grow_vocabulary(before, {"dog", "emu", "yak"});
  // A context of known words, and one where the public model saw <unk>.
  for (const TokenSequence& context :
       {TokenSequence{Vocabulary::kBegin, before.vocabulary.id("the"), Vocabulary::kPad},
        TokenSequence{Vocabulary::kBegin, Vocabulary::kUnknown, Vocabulary::kPad}}) {
    const std::vector<double> old_p = next_word_probabilities(before, context);
    const std::vector<double> new_p = next_word_probabilities(grown.trained, context);
    ASSERT_EQ(new_p.size(), old_p.size() + 3);
    for (size_t w = 0; w < old_p.size(); ++w) {
      if (w == Vocabulary::kUnknown) continue;
      EXPECT_NEAR(new_p[w], old_p[w], 1e-6) << "word " << w;
    }
    // <unk> and the three new words: four equal shares of <unk>'s mass.
    for (size_t w : {size_t{Vocabulary::kUnknown}, old_p.size(), old_p.size() + 1,
                     old_p.size() + 2}) {
      EXPECT_NEAR(new_p[w], old_p[Vocabulary::kUnknown] / 4, 1e-6) << "word " << w;
    }
  }
  // A new word typed as context acts as <unk> did.
  const TokenSequence as_unknown{Vocabulary::kBegin, Vocabulary::kUnknown, Vocabulary::kPad};
  const TokenSequence as_new{Vocabulary::kBegin, grown.trained.vocabulary.id("emu"),
                             Vocabulary::kPad};
  const std::vector<double> a = next_word_probabilities(grown.trained, as_unknown);
  const std::vector<double> b = next_word_probabilities(grown.trained, as_new);
  for (size_t w = 0; w < a.size(); ++w) EXPECT_NEAR(a[w], b[w], 1e-7) << "word " << w;
}

TEST(VocabularyGrowth, NothingNewLeavesTheModelAsItWas) {
  const TrainedModel before = public_model();
  const GrownModel grown = grow_vocabulary(before, {"the", "mat"});
  EXPECT_TRUE(grown.added.empty());
  ASSERT_EQ(grown.trained.model.parameter_count(), before.model.parameter_count());
  for (size_t i = 0; i < before.model.parameter_count(); ++i) {
    ASSERT_EQ(grown.trained.model.parameters()[i], before.model.parameters()[i]) << i;
  }
}

TEST(VocabularyGrowth, NeverAddsASpecialTokenName) {
  const GrownModel grown = grow_vocabulary(public_model(), {"dog", "<unk>", "</s>"});
  EXPECT_EQ(grown.added, std::vector<std::string>{"dog"});
}

}  // namespace
}  // namespace blur::trainer
