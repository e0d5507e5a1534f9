// Next-word evaluation of a language model on token sequences, the unigram
// baseline, and canary exposure (Carlini et al., "The Secret Sharer",
// USENIX Security 2019).
//
// A sequence predicts each token from the ones before it. Rules (also in
// docs/language-model.md):
//   - accuracy targets: vocabulary words (ids >= Vocabulary::kSpecialCount);
//     <unk> and sentence boundaries are not words to predict;
//   - predictions: the k highest logits among word ids (the model is never
//     credited for suggesting <unk>, <s>, </s> or <pad>);
//   - perplexity: exp(mean cross-entropy) of the full softmax over every
//     target except <pad> (<unk> and </s> included), in nats.
#ifndef BLUR_TRAINER_DATA_EVALUATION_H
#define BLUR_TRAINER_DATA_EVALUATION_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace blur::trainer {

using TokenSequence = std::vector<int32_t>;

// Calls visit(t, logits) for t = 0 .. tokens.size() - 2 with the model's
// vocab-size logits for the token after tokens[0..t].
using LogitsVisitor = std::function<void(size_t position, const float* logits)>;
using SequenceForward = std::function<void(const TokenSequence& tokens, const LogitsVisitor&)>;

struct EvaluationResult {
  double top1 = 0;        // fraction of word targets whose word is the best word
  double top3 = 0;        // ... among the three best words
  double perplexity = 0;  // exp(mean cross-entropy), all non-pad targets
  uint64_t word_targets = 0;
  uint64_t all_targets = 0;
};

// `first_word` is the smallest id that counts as a word (4 with the
// standard specials).
EvaluationResult evaluate_model(const std::vector<TokenSequence>& sequences, size_t vocab_size,
                                int32_t first_word, const SequenceForward& forward);

// The unigram baseline: always suggests the most frequent training words;
// its perplexity is that of add-one smoothed training frequencies.
EvaluationResult evaluate_unigram(const std::vector<TokenSequence>& train,
                                  const std::vector<TokenSequence>& test, size_t vocab_size,
                                  int32_t first_word);

// The summed cross-entropy (nats) of a sequence's tokens after the first:
// the canary's "log-perplexity".
double sequence_log_perplexity(const TokenSequence& tokens, size_t vocab_size,
                               const SequenceForward& forward);

struct ExposureResult {
  uint64_t rank = 0;        // 1 = the canary is the most likely of all
  uint64_t candidates = 0;  // R: the canary and R - 1 other fillings
  double exposure = 0;      // log2 R - log2 rank
};

// Exposure of `canary` among `others` (other fillings of the same
// template): rank by log-perplexity, ties counted against the canary.
ExposureResult canary_exposure(const TokenSequence& canary,
                               const std::vector<TokenSequence>& others, size_t vocab_size,
                               const SequenceForward& forward);

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_DATA_EVALUATION_H
