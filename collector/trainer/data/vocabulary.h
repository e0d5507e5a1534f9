// The language model's vocabulary: word <-> id, with four special tokens,
// built without leaking private rare words (docs/training-data.md):
//
//   candidates = the public word list (wamerican), normalized by the
//                tokenizer (lower-cased, deduplicated);
//   counts     = over the training units, each unit adding +1 to each of
//                its first k distinct candidate words (reading order);
//   noisy      = counts + N(0, (sigma * sqrt(k))^2) for EVERY candidate,
//                zero counts included: a Gaussian mechanism with L2
//                sensitivity sqrt(k) and noise multiplier sigma;
//   vocabulary = specials + the candidates with noisy count >= threshold
//                (threshold_stddevs * sigma * sqrt(k)), the largest first,
//                at most V - 4 of them (post-processing: no further cost).
//
// Words outside the public list can never enter. A loaded vocabulary file
// (a saved one, or a user's word list) costs no privacy.
#ifndef BLUR_TRAINER_DATA_VOCABULARY_H
#define BLUR_TRAINER_DATA_VOCABULARY_H

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "trainer/data/corpus.h"
#include "trainer/data/tokenizer.h"
#include "trainer/random/discrete_gaussian.h"
#include "trainer/random/gaussian_noise.h"
#include "trainer/random/drbg_stream.h"

namespace blur::trainer {

class VocabularyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline constexpr const char* kDefaultPublicWordList = "/usr/share/dict/american-english";

// The public candidate words, sorted and unique.
class PublicWordList {
 public:
  // One word per line (UTF-8). Each line is normalized by the tokenizer;
  // lines that are not exactly one token are skipped (counted in rejected()).
  static PublicWordList load(const std::string& path = kDefaultPublicWordList,
                             const Tokenizer& tokenizer = Tokenizer());
  static PublicWordList from_words(const std::vector<std::string>& entries,
                                   const Tokenizer& tokenizer = Tokenizer());

  size_t size() const { return words_.size(); }
  const std::vector<std::string>& words() const { return words_; }
  // Index in words(), or -1.
  int64_t index(const std::string& word) const;
  bool contains(const std::string& word) const { return index(word) >= 0; }
  size_t rejected() const { return rejected_; }

 private:
  std::vector<std::string> words_;
  std::unordered_map<std::string, int64_t> index_;
  size_t rejected_ = 0;
};

class Vocabulary {
 public:
  static constexpr int32_t kPad = 0;      // "<pad>": batch padding, never a target
  static constexpr int32_t kUnknown = 1;  // "<unk>": any word not in the vocabulary
  static constexpr int32_t kBegin = 2;    // "<s>": before each sentence
  static constexpr int32_t kEnd = 3;      // "</s>": after each sentence
  static constexpr int32_t kSpecialCount = 4;
  // First line of a saved vocabulary; ids are the order of the lines after it.
  static constexpr const char* kHeader = "#blur-vocabulary v1";

  // The specials, then `words` in order (duplicates, empty strings and
  // special names skipped).
  static Vocabulary from_words(const std::vector<std::string>& words);

  // A file written by save() (header, then every token, specials first),
  // or a user's word list (one word per line, no header; each normalized by
  // the tokenizer, blank lines skipped, duplicates dropped, specials
  // prepended). Throws VocabularyError on a missing file, invalid UTF-8, a
  // malformed saved file, or a user line that is not exactly one token.
  static Vocabulary load(const std::string& path, const Tokenizer& tokenizer = Tokenizer());
  void save(const std::string& path) const;

  size_t size() const { return words_.size(); }
  const std::vector<std::string>& words() const { return words_; }
  const std::string& word(int32_t id) const;  // throws std::out_of_range
  int32_t id(const std::string& word) const;  // kUnknown when absent
  bool contains(const std::string& word) const { return index_.count(word) != 0; }

  // Token ids of a unit: for every sentence of every text,
  // <s> w1 ... wn </s>, unknown words as <unk>.
  std::vector<int32_t> encode(const Unit& unit, const Tokenizer& tokenizer = Tokenizer()) const;
  std::vector<int32_t> encode_text(std::string_view text,
                                   const Tokenizer& tokenizer = Tokenizer()) const;

  // Word tokens (boundaries excluded) of `units`, and how many are <unk>.
  struct Coverage {
    uint64_t tokens = 0;
    uint64_t unknown = 0;
    double oov_rate() const { return tokens == 0 ? 0.0 : static_cast<double>(unknown) / tokens; }
  };
  Coverage coverage(const std::vector<Unit>& units, const Tokenizer& tokenizer = Tokenizer()) const;

 private:
  std::vector<std::string> words_;
  std::unordered_map<std::string, int32_t> index_;
};

// --- the differentially private vocabulary ----------------------------------

// What the RDP accountant composes: one Gaussian mechanism on the full data
// (sample_rate 1, steps 1) with this noise multiplier, i.e. RDP
// epsilon(alpha) = alpha / (2 sigma^2) at every order alpha.
struct GaussianPhase {
  double noise_multiplier = 0;
  double sample_rate = 1.0;
  int64_t steps = 1;
};

struct DpVocabularyConfig {
  size_t max_size = 8000;          // V, the 4 special tokens included
  size_t max_words_per_unit = 16;  // k
  double noise_multiplier = 3.0;   // sigma; noise stddev is sigma * sqrt(k) = 12
  // Keep a word only if its noisy count >= threshold_stddevs * stddev
  // (post-processing). At the defaults, 54: a word of true count 1 passes
  // with probability Q(4.5 - 1/12) = 5.0e-6, a count-0 word with
  // Q(4.5) = 3.4e-6. -infinity disables it: plain top-V.
  double threshold_stddevs = 4.5;
};

struct DpVocabularyReport {
  GaussianPhase phase;         // for the accountant
  double noise_stddev = 0;     // sigma * sqrt(k)
  double min_noisy_count = 0;  // the threshold in counts
  size_t candidates = 0;       // public words, each given noise
  size_t units = 0;            // training units counted
  uint64_t contributions = 0;  // +1s added (<= k * units)
  size_t above_threshold = 0;  // candidates that passed the threshold
};

struct DpVocabulary {
  Vocabulary vocabulary;
  DpVocabularyReport report;
};

// Validates `config` (V > 4, k >= 1, sigma > 0 finite); throws VocabularyError.
// The noise comes from `noise` (a training run's "vocabulary" stream).
DpVocabulary build_dp_vocabulary(const std::vector<Unit>& train_units,
                                 const PublicWordList& public_words,
                                 const DpVocabularyConfig& config, const GaussianNoise& noise,
                                 const Tokenizer& tokenizer = Tokenizer());

// The same with exact discrete Gaussian noise instead (discrete_gaussian.h,
// the trainer's; no floating-point noise): add_discrete_gaussian_noise's
// scores, and report.phase.noise_multiplier is its sigma_eff >= sigma.
DpVocabulary build_dp_vocabulary(const std::vector<Unit>& train_units,
                                 const PublicWordList& public_words,
                                 const DpVocabularyConfig& config,
                                 const DiscreteGaussianNoise& noise,
                                 const Tokenizer& tokenizer = Tokenizer());

// The steps of build_dp_vocabulary, exposed for tests and measurements.
// counts[i] for public_words.words()[i], each unit contributing +1 to at
// most k distinct candidates (the first k distinct in reading order).
std::vector<uint64_t> bounded_counts(const std::vector<Unit>& units,
                                     const PublicWordList& public_words, size_t k,
                                     const Tokenizer& tokenizer = Tokenizer(),
                                     uint64_t* contributions = nullptr);
// counts + stddev * Z_i for candidate i (the noise's normals in list order).
std::vector<double> add_gaussian_noise(const std::vector<uint64_t>& counts, double stddev,
                                       const GaussianNoise& noise);
// Counts on the grid 1/D, D = floor(2^20 / (sigma sqrt(k))) >= 1, plus
// N_Z(0, 2^40) per candidate in grid units, back in counts:
// (D c_i + Z_i) / D. The integer L2 sensitivity is D sqrt(k), so this is the
// Gaussian mechanism with noise multiplier sigma_eff = 2^20 / (D sqrt(k))
// >= sigma, written to *effective_noise_multiplier.
std::vector<double> add_discrete_gaussian_noise(const std::vector<uint64_t>& counts,
                                                double noise_multiplier, size_t k,
                                                const DiscreteGaussianNoise& noise,
                                                double* effective_noise_multiplier);
// The specials + up to max_size - 4 candidates with score >= min_score,
// highest score first (ties: the word's byte order).
Vocabulary top_words(const PublicWordList& public_words, const std::vector<double>& scores,
                     size_t max_size, double min_score, size_t* passed = nullptr);

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_DATA_VOCABULARY_H
