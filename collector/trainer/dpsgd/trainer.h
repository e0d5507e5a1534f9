// `blur-trainer train`: corpus -> DP vocabulary -> DP-SGD LSTM -> model
// file, with the privacy accounting of the whole run.
//
// Privacy unit: a corpus unit (a line, a fortune, or all lines of one
// user). The run's epsilon at delta composes (RDP accountant; PLD beside):
//   the DP vocabulary (a Gaussian mechanism: q = 1, one step, noise
//   multiplier sigma_v; vocabulary.h), unless a vocabulary file is given;
//   the DP count of the training units N (dp_sums.h: q = 1, one step,
//   count_noise_multiplier), unless units_estimate gives a public N;
//   DP-SGD: T = ceil(epochs / q) steps at sampling rate q = B / N^ (B the
//   expected batch, N^ the DP count or the public estimate, never the
//   exact N), noise multiplier sigma, update divisor q N^;
//   the DP validation (noisy per-unit top-1/top-3 sums of the private
//   validation split: q = 1, one step, validation_noise_multiplier),
//   unless validation_corpus names public text or the noise is 0 (none);
//   all of it tuning_runs times (the runs of a hyperparameter search
//   compose: the target is what all of them spend together).
// With --epsilon E, sigma is the smallest that keeps the total <= E; with
// --noise-multiplier it is given and the epsilon reported. epsilon = inf
// trains without clipping or noise (same code path) and a non-private
// vocabulary (the top words of the public list by true count).
//
// What leaves a private run (progress lines, summary, model file): the
// parameters, the DP vocabulary, N^, q, T, sigma and the accounting, the
// validation (DP or on public text), timing. Never the exact N, a
// batch's size, loss or clipped count, or statistics of private text
// computed without noise.
//
// Resume: the checkpoint holds the run plan (q, sigma, T, N^, the phases,
// the options that shaped them); a resumed run trains and accounts exactly
// that plan, and an option given on the command line that disagrees with
// it is refused (std::invalid_argument).
//
// Public pretraining, private fine-tuning: train a model with --epsilon inf
// on public text, then `train --init-from PUBLIC_MODEL` on the private
// corpus: the fine-tuning starts from the public model's parameters and
// vocabulary, and its DP-SGD is the only use of private data (the
// vocabulary was not computed from it), so it is all the accounting covers.
// With vocabulary_words beside init_model, the words the public model lacks
// are added to it first (model/vocabulary_growth.h): the keyboard loop's
// public model + the fleet's discovered words.
#ifndef BLUR_TRAINER_DPSGD_TRAINER_H
#define BLUR_TRAINER_DPSGD_TRAINER_H

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "trainer/data/corpus.h"
#include "trainer/model/model_file.h"

namespace blur::trainer {

struct TrainOptions {
  std::string corpus = "fortunes";  // a file, a directory, or "fortunes" (Debian's)
  CorpusFormat format = CorpusFormat::kAuto;
  double epsilon = 3;  // target; +inf: not private
  double delta = 1e-5;
  std::optional<double> noise_multiplier;  // instead of calibrating to epsilon
  double epochs = 3;
  double expected_batch = 512;  // B = q N
  double clip_norm = 1.0;
  double learning_rate = 2.0;
  // kCosine: step k of K uses learning_rate * (1 + cos(pi k / K)) / 2.
  // A schedule is post-processing of the privatized updates: no privacy cost.
  enum class Schedule { kConstant, kCosine } schedule = Schedule::kConstant;
  double momentum = 0.9;
  int32_t embedding = 64;
  int32_t hidden = 128;
  size_t vocab_size = 5000;     // including the 4 special tokens
  std::string vocabulary_file;  // instead of the DP vocabulary (no privacy cost)
  // A model trained on PUBLIC text (train --epsilon inf on a public corpus):
  // its vocabulary and parameters are the starting point, and the privacy
  // accounting covers the private fine-tuning only. Sizes come from it.
  std::string init_model;
  // Or these words (a word-discovery metric's: their LDP was paid on the
  // devices), described in the summary by vocabulary_words_source; with
  // init_model, those it lacks are added to its vocabulary.
  std::vector<std::string> vocabulary_words;
  std::string vocabulary_words_source;
  double vocab_noise_multiplier = 8.0;  // epsilon 0.48 at delta 1e-5 on its own
  size_t vocab_words_per_unit = 16;
  size_t max_tokens = 64;  // a unit's tokens beyond this are not used
  std::string canary;      // inserted as `canary_repeats` extra training units
  uint32_t canary_repeats = 0;
  std::string checkpoint;  // written every checkpoint_every steps (+ ".vocab")
  uint64_t checkpoint_every = 100;
  bool resume = false;
  // A public estimate of the number of training units (no privacy cost);
  // otherwise the trainer counts them with DP (count_noise_multiplier).
  std::optional<double> units_estimate;
  double count_noise_multiplier = 16;
  // Public validation text; otherwise DP validation on the private split
  // with this noise multiplier (0: no validation released).
  std::string validation_corpus;
  double validation_noise_multiplier = 8;
  uint32_t tuning_runs = 1;  // K: the accounting composes K runs like this one
  // The parameter groups trained (ParameterGroup bits; DpSgdConfig): with
  // --init-from, e.g. output and LSTM only, so the noise covers fewer
  // coordinates; the rest keep the public model's values. Accounted exactly
  // as training all of them.
  uint32_t trained_groups = kAllGroups;
  // Options given explicitly (names without "--"): on resume each must
  // agree with the checkpoint's plan.
  std::vector<std::string> given;
  std::optional<uint64_t> seed;  // reproducible runs (tests, experiments): NOT private
  uint32_t progress_every = 20;  // steps between progress lines
  size_t threads = 0;            // worker threads (0: one per core); see model/parallel.h
  uint64_t stop_after_steps = 0;  // > 0: stop there (after its checkpoint), as if interrupted
};

struct TrainReport {
  TrainedModel trained;
  std::string summary_json;  // also stored in the model file
};

// Throws std::runtime_error / std::invalid_argument with a message for the
// user. Progress lines go to `progress`.
TrainReport train_language_model(const TrainOptions& options,
                                 const std::function<void(const std::string&)>& progress);

// The corpus's units split as training uses them (default corpus for
// "fortunes"), encoded with `vocabulary`, truncated to max_tokens.
struct EncodedSplits {
  std::vector<Example> train, validation, test;
};
EncodedSplits encode_corpus(const std::string& corpus, CorpusFormat format,
                            const Vocabulary& vocabulary, size_t max_tokens);

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_DPSGD_TRAINER_H
