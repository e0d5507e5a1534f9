#include "trainer/data/vocabulary.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace blur::trainer {

namespace {

// Any version of the saved format starts with this.
constexpr const char* kHeaderPrefix = "#blur-vocabulary";

constexpr const char* kSpecialNames[Vocabulary::kSpecialCount] = {"<pad>", "<unk>", "<s>", "</s>"};

bool is_special_name(const std::string& word) {
  return std::find(std::begin(kSpecialNames), std::end(kSpecialNames), word) !=
         std::end(kSpecialNames);
}

std::string read_text_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw VocabularyError(std::string(what) + " '" + path + "': cannot open");
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) throw VocabularyError(std::string(what) + " '" + path + "': read error");
  std::string text = contents.str();
  size_t bad = 0;
  if (!is_valid_utf8(text, &bad)) {
    throw VocabularyError(std::string(what) + " '" + path + "': invalid UTF-8 at byte " +
                          std::to_string(bad));
  }
  return text;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

}  // namespace

// --- PublicWordList ------------------------------------------------------------

PublicWordList PublicWordList::from_words(const std::vector<std::string>& entries,
                                          const Tokenizer& tokenizer) {
  PublicWordList list;
  for (const std::string& entry : entries) {
    if (entry.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string word = tokenizer.normalize_word(entry);
    if (word.empty()) {
      ++list.rejected_;
    } else {
      list.words_.push_back(std::move(word));
    }
  }
  std::sort(list.words_.begin(), list.words_.end());
  list.words_.erase(std::unique(list.words_.begin(), list.words_.end()), list.words_.end());
  list.index_.reserve(list.words_.size());
  for (size_t i = 0; i < list.words_.size(); ++i) {
    list.index_.emplace(list.words_[i], static_cast<int64_t>(i));
  }
  return list;
}

PublicWordList PublicWordList::load(const std::string& path, const Tokenizer& tokenizer) {
  PublicWordList list = from_words(lines_of(read_text_file(path, "public word list")), tokenizer);
  if (list.size() == 0) throw VocabularyError("public word list '" + path + "': no words");
  return list;
}

int64_t PublicWordList::index(const std::string& word) const {
  const auto it = index_.find(word);
  return it == index_.end() ? -1 : it->second;
}

// --- Vocabulary ------------------------------------------------------------------

Vocabulary Vocabulary::from_words(const std::vector<std::string>& words) {
  Vocabulary vocabulary;
  for (const char* name : kSpecialNames) {
    vocabulary.index_.emplace(name, static_cast<int32_t>(vocabulary.words_.size()));
    vocabulary.words_.emplace_back(name);
  }
  for (const std::string& word : words) {
    if (word.empty() || vocabulary.index_.count(word) != 0) continue;
    vocabulary.index_.emplace(word, static_cast<int32_t>(vocabulary.words_.size()));
    vocabulary.words_.push_back(word);
  }
  return vocabulary;
}

Vocabulary Vocabulary::load(const std::string& path, const Tokenizer& tokenizer) {
  const std::vector<std::string> lines = lines_of(read_text_file(path, "vocabulary"));
  if (!lines.empty() && lines[0].rfind(kHeaderPrefix, 0) == 0) {
    if (lines[0] != kHeader) {
      throw VocabularyError("vocabulary '" + path + "': unsupported header '" + lines[0] + "'");
    }
    if (lines.size() < 1 + kSpecialCount) {
      throw VocabularyError("vocabulary '" + path + "': truncated (no special tokens)");
    }
    for (int32_t i = 0; i < kSpecialCount; ++i) {
      if (lines[1 + static_cast<size_t>(i)] != kSpecialNames[i]) {
        throw VocabularyError("vocabulary '" + path + "':" + std::to_string(i + 2) +
                              ": expected special token " + kSpecialNames[i]);
      }
    }
    std::vector<std::string> words(lines.begin() + 1 + kSpecialCount, lines.end());
    std::unordered_map<std::string, size_t> seen;
    for (size_t i = 0; i < words.size(); ++i) {
      const size_t line = i + 2 + kSpecialCount;
      if (words[i].empty() || tokenizer.normalize_word(words[i]) != words[i]) {
        throw VocabularyError("vocabulary '" + path + "':" + std::to_string(line) +
                              ": not a normalized word: '" + words[i] + "'");
      }
      if (!seen.emplace(words[i], line).second || is_special_name(words[i])) {
        throw VocabularyError("vocabulary '" + path + "':" + std::to_string(line) +
                              ": duplicate word '" + words[i] + "'");
      }
    }
    return from_words(words);
  }
  // A user's word list.
  std::vector<std::string> words;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find_first_not_of(" \t") == std::string::npos) continue;
    std::string word = tokenizer.normalize_word(lines[i]);
    if (word.empty()) {
      throw VocabularyError("vocabulary '" + path + "':" + std::to_string(i + 1) + ": '" +
                            lines[i] + "' is not a single word under the tokenizer's rules");
    }
    words.push_back(std::move(word));
  }
  if (words.empty()) throw VocabularyError("vocabulary '" + path + "': no words");
  return from_words(words);
}

void Vocabulary::save(const std::string& path) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw VocabularyError("vocabulary '" + path + "': cannot create");
  out << kHeader << '\n';
  for (const std::string& word : words_) out << word << '\n';
  out.flush();
  if (!out) throw VocabularyError("vocabulary '" + path + "': write error");
}

const std::string& Vocabulary::word(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= words_.size()) {
    throw std::out_of_range("vocabulary: no token id " + std::to_string(id));
  }
  return words_[static_cast<size_t>(id)];
}

int32_t Vocabulary::id(const std::string& word) const {
  const auto it = index_.find(word);
  return it == index_.end() ? kUnknown : it->second;
}

std::vector<int32_t> Vocabulary::encode_text(std::string_view text,
                                             const Tokenizer& tokenizer) const {
  std::vector<int32_t> ids;
  for (const Sentence& sentence : tokenizer.sentences(text)) {
    ids.push_back(kBegin);
    for (const std::string& word : sentence) ids.push_back(id(word));
    ids.push_back(kEnd);
  }
  return ids;
}

std::vector<int32_t> Vocabulary::encode(const Unit& unit, const Tokenizer& tokenizer) const {
  std::vector<int32_t> ids;
  for (const std::string& text : unit.texts) {
    const std::vector<int32_t> part = encode_text(text, tokenizer);
    ids.insert(ids.end(), part.begin(), part.end());
  }
  return ids;
}

Vocabulary::Coverage Vocabulary::coverage(const std::vector<Unit>& units,
                                          const Tokenizer& tokenizer) const {
  Coverage coverage;
  for (const Unit& unit : units) {
    for (const std::string& text : unit.texts) {
      for (const std::string& word : tokenizer.words(text)) {
        ++coverage.tokens;
        if (index_.count(word) == 0) ++coverage.unknown;
      }
    }
  }
  return coverage;
}

// --- the DP vocabulary -------------------------------------------------------------

std::vector<uint64_t> bounded_counts(const std::vector<Unit>& units,
                                     const PublicWordList& public_words, size_t k,
                                     const Tokenizer& tokenizer, uint64_t* contributions) {
  std::vector<uint64_t> counts(public_words.size(), 0);
  uint64_t total = 0;
  std::vector<int64_t> chosen;
  for (const Unit& unit : units) {
    chosen.clear();
    for (const std::string& text : unit.texts) {
      if (chosen.size() >= k) break;
      for (const std::string& word : tokenizer.words(text)) {
        const int64_t index = public_words.index(word);
        if (index < 0 || std::find(chosen.begin(), chosen.end(), index) != chosen.end()) continue;
        chosen.push_back(index);
        if (chosen.size() >= k) break;
      }
    }
    for (int64_t index : chosen) ++counts[static_cast<size_t>(index)];
    total += chosen.size();
  }
  if (contributions != nullptr) *contributions = total;
  return counts;
}

std::vector<double> add_gaussian_noise(const std::vector<uint64_t>& counts, double stddev,
                                       const GaussianNoise& noise) {
  std::vector<double> noisy(counts.begin(), counts.end());
  noise.add(noisy.data(), noisy.size(), stddev);
  return noisy;
}

Vocabulary top_words(const PublicWordList& public_words, const std::vector<double>& scores,
                     size_t max_size, double min_score, size_t* passed) {
  if (scores.size() != public_words.size()) {
    throw VocabularyError("top_words: one score per public word expected");
  }
  std::vector<size_t> order;
  for (size_t i = 0; i < scores.size(); ++i) {
    if (scores[i] >= min_score) order.push_back(i);
  }
  if (passed != nullptr) *passed = order.size();
  const size_t room =
      max_size > Vocabulary::kSpecialCount ? max_size - Vocabulary::kSpecialCount : 0;
  const auto better = [&](size_t a, size_t b) {
    if (scores[a] != scores[b]) return scores[a] > scores[b];
    return public_words.words()[a] < public_words.words()[b];
  };
  if (order.size() > room) {
    std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(room), order.end(),
                      better);
    order.resize(room);
  } else {
    std::sort(order.begin(), order.end(), better);
  }
  std::vector<std::string> words;
  words.reserve(order.size());
  for (size_t i : order) words.push_back(public_words.words()[i]);
  return Vocabulary::from_words(words);
}

namespace {

void validate(const DpVocabularyConfig& config, const PublicWordList& public_words) {
  if (config.max_size <= static_cast<size_t>(Vocabulary::kSpecialCount)) {
    throw VocabularyError("dp vocabulary: max_size must exceed the 4 special tokens");
  }
  if (config.max_words_per_unit == 0) {
    throw VocabularyError("dp vocabulary: max_words_per_unit (k) must be at least 1");
  }
  if (!(config.noise_multiplier > 0) || !std::isfinite(config.noise_multiplier)) {
    throw VocabularyError("dp vocabulary: noise_multiplier must be positive and finite");
  }
  if (std::isnan(config.threshold_stddevs)) {
    throw VocabularyError("dp vocabulary: threshold_stddevs is NaN");
  }
  if (public_words.size() == 0) throw VocabularyError("dp vocabulary: empty public word list");
}

// The mechanism with `add_noise(counts, report)` giving the noisy counts.
template <typename AddNoise>
DpVocabulary dp_vocabulary(const std::vector<Unit>& train_units,
                           const PublicWordList& public_words, const DpVocabularyConfig& config,
                           const Tokenizer& tokenizer, const AddNoise& add_noise) {
  validate(config, public_words);
  DpVocabularyReport report;
  report.phase.noise_multiplier = config.noise_multiplier;
  report.noise_stddev =
      config.noise_multiplier * std::sqrt(static_cast<double>(config.max_words_per_unit));
  report.min_noisy_count = config.threshold_stddevs * report.noise_stddev;
  report.candidates = public_words.size();
  report.units = train_units.size();
  const std::vector<uint64_t> counts = bounded_counts(
      train_units, public_words, config.max_words_per_unit, tokenizer, &report.contributions);
  const std::vector<double> noisy = add_noise(counts, report);
  Vocabulary vocabulary = top_words(public_words, noisy, config.max_size, report.min_noisy_count,
                                    &report.above_threshold);
  return DpVocabulary{std::move(vocabulary), report};
}

}  // namespace

DpVocabulary build_dp_vocabulary(const std::vector<Unit>& train_units,
                                 const PublicWordList& public_words,
                                 const DpVocabularyConfig& config, const GaussianNoise& noise,
                                 const Tokenizer& tokenizer) {
  return dp_vocabulary(train_units, public_words, config, tokenizer,
                       [&](const std::vector<uint64_t>& counts, DpVocabularyReport& report) {
                         return add_gaussian_noise(counts, report.noise_stddev, noise);
                       });
}

DpVocabulary build_dp_vocabulary(const std::vector<Unit>& train_units,
                                 const PublicWordList& public_words,
                                 const DpVocabularyConfig& config,
                                 const DiscreteGaussianNoise& noise, const Tokenizer& tokenizer) {
  return dp_vocabulary(train_units, public_words, config, tokenizer,
                       [&](const std::vector<uint64_t>& counts, DpVocabularyReport& report) {
                         return add_discrete_gaussian_noise(
                             counts, config.noise_multiplier, config.max_words_per_unit, noise,
                             &report.phase.noise_multiplier);
                       });
}

std::vector<double> add_discrete_gaussian_noise(const std::vector<uint64_t>& counts,
                                                double sigma, size_t k,
                                                const DiscreteGaussianNoise& noise,
                                                double* effective) {
  constexpr unsigned kLog2Sigma = 20;
  const double t = std::ldexp(1.0, kLog2Sigma);
  const double root = std::sqrt(static_cast<double>(k));
  const auto scale = static_cast<int64_t>(std::max(1.0, std::floor(t / (sigma * root))));
  std::vector<int64_t> z(counts.size());
  noise.sample(z.data(), z.size(), kLog2Sigma, 1);
  std::vector<double> noisy(counts.size());
  for (size_t i = 0; i < counts.size(); ++i) {
    noisy[i] = static_cast<double>(static_cast<int64_t>(counts[i]) * scale + z[i]) /
               static_cast<double>(scale);
  }
  if (effective != nullptr) *effective = t / (static_cast<double>(scale) * root);
  return noisy;
}

}  // namespace blur::trainer
