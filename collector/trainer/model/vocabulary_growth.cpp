#include "trainer/model/vocabulary_growth.h"

#include <cmath>
#include <stdexcept>
#include <unordered_set>

#include "blur/model/next_word_model.h"

namespace blur::trainer {

GrownModel grow_vocabulary(const TrainedModel& model, const std::vector<std::string>& words) {
  const Vocabulary& old_vocabulary = model.vocabulary;
  std::vector<std::string> added;
  std::unordered_set<std::string> seen;
  for (const std::string& word : words) {
    // Special names are in every vocabulary, so they are never added.
    if (word.empty() || old_vocabulary.contains(word) || !seen.insert(word).second) continue;
    added.push_back(word);
  }
  std::vector<std::string> all = old_vocabulary.words();
  all.insert(all.end(), added.begin(), added.end());
  Vocabulary vocabulary = Vocabulary::from_words(all);
  if (vocabulary.size() > kMaxNextWordVocab) {
    throw std::invalid_argument("the public model's vocabulary and the discovered words make " +
                                std::to_string(vocabulary.size()) + " tokens, over the device's " +
                                std::to_string(kMaxNextWordVocab));
  }

  const LanguageModel& from = model.model;
  LanguageModelConfig config = from.config();
  const Eigen::Index v = config.vocab_size, k = static_cast<Eigen::Index>(added.size());
  config.vocab_size = static_cast<int32_t>(v + k);
  LanguageModel to(config);
  const Eigen::Index unk = Vocabulary::kUnknown;
  auto embedding = to.block(LanguageModel::kEmbedding);  // d_e x V: a column per token
  embedding.leftCols(v) = from.block(LanguageModel::kEmbedding);
  embedding.rightCols(k).colwise() = from.block(LanguageModel::kEmbedding).col(unk);
  to.block(LanguageModel::kLstmWeight) = from.block(LanguageModel::kLstmWeight);
  to.block(LanguageModel::kLstmBias) = from.block(LanguageModel::kLstmBias);
  auto output = to.block(LanguageModel::kOutputWeight);  // V x H: a row per token
  output.topRows(v) = from.block(LanguageModel::kOutputWeight);
  output.bottomRows(k).rowwise() = from.block(LanguageModel::kOutputWeight).row(unk);
  auto bias = to.block(LanguageModel::kOutputBias);  // V x 1
  bias.topRows(v) = from.block(LanguageModel::kOutputBias);
  const float share = from.block(LanguageModel::kOutputBias)(unk, 0) -
                      static_cast<float>(std::log(static_cast<double>(k) + 1.0));
  bias.bottomRows(k).setConstant(share);
  bias(unk, 0) = share;

  return GrownModel{TrainedModel{std::move(vocabulary), std::move(to), model.summary_json},
                    std::move(added)};
}

}  // namespace blur::trainer
