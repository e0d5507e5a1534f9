#include "discovery/word_discovery.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>

#include "blur/discovery/prefix_extension.h"
#include "discovery/fragment_puzzle_discovery.h"
#include "registry/mechanism_spec.h"

namespace blur::collector {

namespace {

constexpr uint32_t kSeeds = blur::kPrefixHashSeeds;

// A prefix or word grown by the decoder, with its estimate (for the beam).
struct Candidate {
  blur::Word word;
  double estimate = 0;
};

// The beam's order: by estimate, ties by the packed characters, so that
// the result does not depend on the number of threads.
bool before(const Candidate& x, const Candidate& y) {
  return x.estimate > y.estimate ||
         (x.estimate == y.estimate &&
          (x.word.low < y.word.low || (x.word.low == y.word.low && x.word.high < y.word.high)));
}

// The tally's per-level report counts and the estimates over pooled levels.
class Decoder {
 public:
  Decoder(const MetricConfig& metric, const std::vector<uint64_t>& tally, uint64_t reports)
      : tally_(tally),
        reports_(reports),
        support_(metric),
        bits_(blur::PrefixExtension::bucket_bits(metric.epsilon_micros)),
        params_(mechanism_spec(metric.mechanism).params(metric)),
        level_reports_(support_.levels(), 0) {
    const size_t per_level = size_t{kSeeds} << bits_;
    for (uint32_t level = 0; level < support_.levels(); ++level) {
      const uint64_t* counts = tally_.data() + level * per_level;
      for (size_t i = 0; i < per_level; ++i) level_reports_[level] += counts[i];
    }
  }

  uint32_t levels() const { return support_.levels(); }
  const PrefixSupport& prefix_support() const { return support_; }
  const std::vector<uint64_t>& tally() const { return tally_; }
  uint64_t level_reports(uint32_t level) const { return level_reports_[level]; }

  // `word` over levels first..last, scaled to all reports (header
  // comment). `scratch`: kSeeds bytes.
  CountEstimate estimate(const blur::Word& word, uint32_t first, uint32_t last,
                         uint8_t* scratch) const {
    uint64_t pooled_reports = 0, pooled_support = 0;
    for (uint32_t level = first; level <= last; ++level) {
      if (level_reports_[level] == 0) continue;
      pooled_reports += level_reports_[level];
      support_.hash(level, word, scratch);
      pooled_support += support_.support(tally_, level, scratch, nullptr);
    }
    return scaled(pooled_reports, pooled_support);
  }

  // c_U over N_U pooled reports, scaled to n (scaled_count).
  CountEstimate scaled(uint64_t pooled_reports, uint64_t pooled_support) const {
    ++evaluated_;
    return scaled_count(reports_, pooled_reports, pooled_support, params_);
  }

  // `e` (over levels first..last) with the fixed seed table's variance.
  CountEstimate with_table_variance(const CountEstimate& e, uint32_t first, uint32_t last,
                                    double others_squared) const {
    double pooled = 0, squares = 0;
    for (uint32_t level = first; level <= last; ++level) {
      const double m = static_cast<double>(level_reports_[level]);
      pooled += m;
      squares += m * m;
    }
    if (pooled == 0) return e;
    return with_seed_table_variance(e, params_, bits_, kSeeds, others_squared,
                                    squares / (pooled * pooled));
  }

  uint32_t evaluated() const { return evaluated_; }

 private:
  const std::vector<uint64_t>& tally_;
  uint64_t reports_;
  PrefixSupport support_;
  uint32_t bits_;
  OracleParams params_;
  std::vector<uint64_t> level_reports_;
  mutable std::atomic<uint32_t> evaluated_{0};
};

// A finished word of `length` characters is carried whole by the levels
// whose prefix length exceeds it, and by the last level.
uint32_t first_level_of_word(uint32_t length, uint32_t levels) {
  return std::min(length - 1, levels - 1);
}

}  // namespace

std::string spell(const blur::Word& word) {
  std::string text;
  for (uint32_t i = 0; i < word.length; ++i) text.push_back(blur::word_character(word.code(i)));
  return text;
}

CountEstimate scaled_count(uint64_t reports, uint64_t pooled_reports, uint64_t support,
                           OracleParams params) {
  if (pooled_reports == 0) return CountEstimate{0, INFINITY, -INFINITY, INFINITY};
  const CountEstimate within = estimate_count(pooled_reports, support, params);
  const double n = static_cast<double>(reports), m = static_cast<double>(pooled_reports);
  const double scale = n / m;
  const double f = std::clamp(within.count / m, 0.0, 1.0);
  const double variance = within.std_error * within.std_error + m * f * (1 - f) * (1 - m / n);
  const double count = within.count * scale, error = scale * std::sqrt(variance);
  return CountEstimate{count, error, count - kZ95 * error, count + kZ95 * error};
}

CountEstimate with_device_clustering(const CountEstimate& e, const DeviceClustering& clustering) {
  const double error = std::sqrt(clustering.variance(e.std_error * e.std_error, 0.0, INFINITY));
  return CountEstimate{e.count, error, e.count - kZ95 * error, e.count + kZ95 * error};
}

CountEstimate with_seed_table_variance(const CountEstimate& e, OracleParams params,
                                       uint32_t bucket_bits, uint32_t seeds,
                                       double others_squared, double level_weight) {
  const double g = std::ldexp(1.0, static_cast<int>(bucket_bits));
  const double p = params.p, q = params.q, q_other = (1 - p) / (g - 1);
  const double share = (1 / g) * (1 - 1 / g) / seeds;
  const double ratio = (p - q_other) / (p - q);
  const double extra = share * ratio * ratio * others_squared * level_weight;
  const double error = std::sqrt(e.std_error * e.std_error + extra);
  return CountEstimate{e.count, error, e.count - kZ95 * error, e.count + kZ95 * error};
}

Discovery discover_words(const MetricConfig& metric, const std::vector<uint64_t>& tally,
                         uint64_t reports, const DiscoveryOptions& options) {
  if (metric.mechanism == MechanismId::kSequenceFragmentPuzzle) {
    return discover_words_by_fragments(metric, tally, reports, options);
  }
  Discovery result;
  result.reports = reports;
  if (reports == 0 || options.top_k == 0) return result;
  Decoder decoder(metric, tally, reports);
  const uint32_t levels = decoder.levels();
  const uint32_t beam_width = options.beam != 0 ? options.beam : std::max(8 * options.top_k, 64u);

  // Level l extends prefixes of l + 1 characters; level 0's are the 27
  // one-character prefixes, not estimated on their own. Parents are shared
  // out among threads; each keeps its own finished words and children.
  std::vector<Candidate> parents;
  for (uint32_t code = 1; code < blur::kWordAlphabet; ++code) {
    parents.push_back(Candidate{blur::Word{0, 0, 1}.with(0, code), 0});
  }
  const unsigned threads = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  struct Work {
    std::vector<DiscoveredWord> finished;
    std::vector<Candidate> children;
    std::vector<uint8_t> parent_hashes = std::vector<uint8_t>(kSeeds);
    std::vector<uint8_t> scratch = std::vector<uint8_t>(kSeeds);
  };
  std::vector<Work> work(threads);
  for (uint32_t level = 0; level < levels && !parents.empty(); ++level) {
    const uint32_t length = blur::PrefixExtension::prefix_length(level);
    const bool last = level + 1 == levels;
    auto run = [&](unsigned t) {
      Work& w = work[t];
      for (size_t i = t; i < parents.size(); i += threads) {
        // The parent followed by the end: levels whose prefix length
        // exceeds it carry all of it; the last level carries every word.
        const blur::Word& word = parents[i].word;  // length - 1 characters
        const uint32_t first = first_level_of_word(word.length, levels);
        w.finished.push_back(
            {spell(word), decoder.estimate(word, first, levels - 1, w.scratch.data())});
        // Each child: the parent's buckets xor the new character's row.
        const PrefixSupport& support = decoder.prefix_support();
        support.hash(level, word, w.parent_hashes.data());
        for (uint32_t code = 1; code < blur::kWordAlphabet; ++code) {
          blur::Word child = word.with(length - 1, code);
          child.length = length;
          const uint64_t supported = support.support(decoder.tally(), level, w.parent_hashes.data(),
                                                     support.row(level, length - 1, code));
          const CountEstimate e = decoder.scaled(decoder.level_reports(level), supported);
          if (last) {
            w.finished.push_back({spell(child), e});  // as long as words get: a whole word
          } else {
            w.children.push_back(Candidate{child, e.count});
          }
        }
      }
    };
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(run, t);
    run(0);
    for (auto& thread : pool) thread.join();
    std::vector<Candidate> children;
    for (Work& w : work) {
      children.insert(children.end(), w.children.begin(), w.children.end());
      w.children.clear();
    }
    if (children.size() > beam_width) {
      std::nth_element(children.begin(), children.begin() + beam_width, children.end(), before);
      children.resize(beam_width);
    }
    parents = std::move(children);
  }
  std::vector<DiscoveredWord> finished;
  for (Work& w : work) finished.insert(finished.end(), w.finished.begin(), w.finished.end());

  std::sort(finished.begin(), finished.end(), [](const DiscoveredWord& x, const DiscoveredWord& y) {
    return x.estimate.count > y.estimate.count ||
           (x.estimate.count == y.estimate.count && x.word < y.word);
  });
  // Every finished word's (clipped) estimate enters the others' table
  // variance; the candidates never finished are near zero.
  double all_squared = 0;
  for (const DiscoveredWord& w : finished) {
    const double c = std::max(w.estimate.count, 0.0);
    all_squared += c * c;
  }
  std::vector<DiscoveredWord> answer;
  for (DiscoveredWord& w : finished) {
    if (answer.size() == options.top_k) break;
    const double c = std::max(w.estimate.count, 0.0);
    const uint32_t first = first_level_of_word(static_cast<uint32_t>(w.word.size()), levels);
    w.estimate = decoder.with_table_variance(w.estimate, first, levels - 1, all_squared - c * c);
    if (w.estimate.count >= options.min_z * w.estimate.std_error) answer.push_back(w);
  }
  result.words = std::move(answer);
  result.candidates_evaluated = decoder.evaluated();
  return result;
}

CountEstimate estimate_candidate(const MetricConfig& metric, const std::vector<uint64_t>& tally,
                                 uint64_t reports, const blur::Word& candidate, bool finished) {
  if (metric.mechanism == MechanismId::kSequenceFragmentPuzzle) {
    if (!finished) return CountEstimate{0, INFINITY, -INFINITY, INFINITY};  // words only
    return FragmentPuzzleDecoder(metric, tally, reports).word(candidate);
  }
  const Decoder decoder(metric, tally, reports);
  const uint32_t levels = decoder.levels();
  std::vector<uint8_t> scratch(kSeeds);
  if (finished) {
    return decoder.estimate(candidate, first_level_of_word(candidate.length, levels), levels - 1,
                            scratch.data());
  }
  const uint32_t level = candidate.length - blur::PrefixExtension::kFirstPrefixLength;
  return decoder.estimate(candidate, level, level, scratch.data());
}

PrefixSupport::PrefixSupport(const MetricConfig& metric)
    : levels_(blur::PrefixExtension::levels(metric.domain_size)),
      bits_(blur::PrefixExtension::bucket_bits(metric.epsilon_micros)) {
  tables_.reserve(levels_);
  for (uint32_t level = 0; level < levels_; ++level) {
    tables_.emplace_back(level, blur::PrefixExtension::prefix_length(level), kSeeds, bits_);
  }
}

void PrefixSupport::hash(uint32_t level, const blur::Word& word, uint8_t* hashes) const {
  tables_[level].hash(word, hashes);
}

uint64_t PrefixSupport::support(const std::vector<uint64_t>& tally, uint32_t level,
                                const uint8_t* hashes, const uint8_t* extra) const {
  return tables_[level].support(tally.data() + (size_t{level} * kSeeds << bits_), hashes, extra);
}

const uint8_t* PrefixSupport::row(uint32_t level, uint32_t position, uint32_t code) const {
  return tables_[level].row(position, code);
}

uint64_t PrefixSupport::count(const std::vector<uint64_t>& tally, uint32_t level,
                              const blur::Word& word) const {
  std::vector<uint8_t> hashes(kSeeds);
  hash(level, word.prefix(blur::PrefixExtension::prefix_length(level)), hashes.data());
  return support(tally, level, hashes.data(), nullptr);
}

}  // namespace blur::collector
