#include "discovery/word_discovery.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "blur/discovery/prefix_extension.h"
#include "registry/mechanism_spec.h"

namespace blur::collector {

namespace {

constexpr uint32_t kSeeds = blur::kPrefixHashSeeds;

struct Candidate {
  std::array<uint8_t, blur::kMaxWordLength> codes{};
  uint32_t length = 0;
  double estimate = 0;
};

std::string spell(const Candidate& c) {
  std::string word;
  for (uint32_t i = 0; i < c.length; ++i) word.push_back(blur::word_character(c.codes[i]));
  return word;
}

class Decoder {
 public:
  Decoder(const MetricConfig& metric, const std::vector<uint64_t>& tally, uint64_t reports)
      : tally_(tally),
        reports_(reports),
        levels_(blur::PrefixExtension::levels(metric.domain_size)),
        bits_(blur::PrefixExtension::bucket_bits(metric.epsilon_micros)),
        params_(mechanism_spec(metric.mechanism).params(metric)),
        level_reports_(levels_, 0),
        tables_(levels_),
        hashes_(kSeeds) {
    const size_t per_level = size_t{kSeeds} << bits_;
    for (uint32_t level = 0; level < levels_; ++level) {
      const uint64_t* counts = tally_.data() + level * per_level;
      for (size_t i = 0; i < per_level; ++i) level_reports_[level] += counts[i];
      build_table(level);
    }
  }

  uint32_t levels() const { return levels_; }

  // Reports of `level` supporting the candidate's first `length` characters.
  uint64_t support(uint32_t level, const Candidate& c, uint32_t length) {
    std::fill(hashes_.begin(), hashes_.end(), 0);
    const uint8_t* table = tables_[level].data();
    for (uint32_t p = 0; p < length; ++p) {
      const uint8_t* row = table + (size_t{p} * blur::kWordAlphabet + c.codes[p]) * kSeeds;
      for (uint32_t s = 0; s < kSeeds; ++s) hashes_[s] ^= row[s];
    }
    const uint64_t* counts = tally_.data() + (size_t{level} * kSeeds << bits_);
    uint64_t sum = 0;
    for (uint32_t s = 0; s < kSeeds; ++s) sum += counts[(size_t{s} << bits_) | hashes_[s]];
    return sum;
  }

  // The candidate's first `length` characters over levels first..last,
  // scaled to all reports (header comment).
  CountEstimate estimate(const Candidate& c, uint32_t length, uint32_t first, uint32_t last) {
    uint64_t pooled_reports = 0, pooled_support = 0;
    for (uint32_t level = first; level <= last; ++level) {
      if (level_reports_[level] == 0) continue;
      pooled_reports += level_reports_[level];
      pooled_support += support(level, c, length);
    }
    ++evaluated_;
    if (pooled_reports == 0) return CountEstimate{0, INFINITY, -INFINITY, INFINITY};
    const CountEstimate within = estimate_count(pooled_reports, pooled_support, params_);
    const double n = static_cast<double>(reports_), m = static_cast<double>(pooled_reports);
    const double scale = n / m;
    const double f = std::clamp(within.count / m, 0.0, 1.0);
    const double variance =
        within.std_error * within.std_error + m * f * (1 - f) * (1 - m / n);
    const double count = within.count * scale, error = scale * std::sqrt(variance);
    return CountEstimate{count, error, count - kZ95 * error, count + kZ95 * error};
  }

  uint32_t evaluated() const { return evaluated_; }

 private:
  // tables_[level][(p * 28 + c) * seeds + s]: the bucket of character code c
  // at position p under seed s. The hash is linear (prefix_hash.h), so each
  // is the xor of the images of c's set bits, and a word's bucket the xor
  // of its characters'.
  void build_table(uint32_t level) {
    const uint32_t positions = blur::PrefixExtension::prefix_length(level);
    std::vector<uint8_t>& table = tables_[level];
    table.assign(size_t{positions} * blur::kWordAlphabet * kSeeds, 0);
    const uint32_t shift = 64 - bits_;
    for (uint32_t s = 0; s < kSeeds; ++s) {
      const blur::PrefixHashKey key = blur::prefix_hash_key(level, s);
      // image[j]: the bucket of the word whose only set bit is j (low bits
      // 0..59, then high bits 0..19 as 60..79): top(A x^j) or top(B x^j).
      std::array<uint8_t, 80> image{};
      uint64_t a = key.a, b = key.b;
      for (uint32_t j = 0; j < 60; ++j) {
        image[j] = static_cast<uint8_t>(a >> shift);
        a = blur::gf64_multiply(a, 2);
      }
      for (uint32_t j = 0; j < 20; ++j) {
        image[60 + j] = static_cast<uint8_t>(b >> shift);
        b = blur::gf64_multiply(b, 2);
      }
      for (uint32_t p = 0; p < positions; ++p) {
        for (uint32_t code = 1; code < blur::kWordAlphabet; ++code) {
          uint8_t bucket = 0;
          for (uint32_t bit = 0; bit < blur::kWordBitsPerCharacter; ++bit) {
            if ((code >> bit) & 1u) bucket ^= image[blur::kWordBitsPerCharacter * p + bit];
          }
          table[(size_t{p} * blur::kWordAlphabet + code) * kSeeds + s] = bucket;
        }
      }
    }
  }

  const std::vector<uint64_t>& tally_;
  uint64_t reports_;
  uint32_t levels_;
  uint32_t bits_;
  OracleParams params_;
  std::vector<uint64_t> level_reports_;
  std::vector<std::vector<uint8_t>> tables_;
  std::vector<uint8_t> hashes_;
  uint32_t evaluated_ = 0;
};

}  // namespace

Discovery discover_words(const MetricConfig& metric, const std::vector<uint64_t>& tally,
                         uint64_t reports, const DiscoveryOptions& options) {
  Discovery result;
  result.reports = reports;
  if (reports == 0 || options.top_k == 0) return result;
  Decoder decoder(metric, tally, reports);
  const uint32_t levels = decoder.levels();
  const uint32_t beam_width = options.beam != 0 ? options.beam : std::max(8 * options.top_k, 64u);

  std::vector<DiscoveredWord> finished;
  auto finish = [&](const Candidate& word) {
    // Levels whose prefix length exceeds the word carry all of it; the last
    // level carries every word.
    const uint32_t first = std::min(word.length - 1, levels - 1);
    finished.push_back({spell(word), decoder.estimate(word, word.length, first, levels - 1)});
  };

  // Level l extends prefixes of l + 1 characters; level 0's are the 27
  // one-character prefixes, not estimated on their own.
  std::vector<Candidate> parents;
  for (uint8_t code = 1; code < blur::kWordAlphabet; ++code) {
    Candidate c;
    c.codes[0] = code;
    c.length = 1;
    parents.push_back(c);
  }
  for (uint32_t level = 0; level < levels && !parents.empty(); ++level) {
    const uint32_t length = blur::PrefixExtension::prefix_length(level);
    const bool last = level + 1 == levels;
    std::vector<Candidate> children;
    for (const Candidate& parent : parents) {
      finish(parent);  // the parent followed by the end
      for (uint8_t code = 1; code < blur::kWordAlphabet; ++code) {
        Candidate child = parent;
        child.codes[length - 1] = code;
        child.length = length;
        if (last) {
          finish(child);  // as long as words get: a whole word
        } else {
          child.estimate = decoder.estimate(child, length, level, level).count;
          children.push_back(child);
        }
      }
    }
    if (children.size() > beam_width) {
      std::nth_element(children.begin(), children.begin() + beam_width, children.end(),
                       [](const Candidate& x, const Candidate& y) { return x.estimate > y.estimate; });
      children.resize(beam_width);
    }
    parents = std::move(children);
  }

  std::sort(finished.begin(), finished.end(), [](const DiscoveredWord& x, const DiscoveredWord& y) {
    return x.estimate.count > y.estimate.count || (x.estimate.count == y.estimate.count && x.word < y.word);
  });
  if (finished.size() > options.top_k) finished.resize(options.top_k);
  result.words = std::move(finished);
  result.candidates_evaluated = decoder.evaluated();
  return result;
}

}  // namespace blur::collector
