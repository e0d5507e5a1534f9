#include "discovery/word_discovery.h"

#include <algorithm>
#include <cmath>

#include "aggregate/aggregate.h"
#include "blur/discovery/prefix_extension.h"
#include "discovery/fragment_puzzle_discovery.h"
#include "discovery/level_tally.h"
#include "discovery/support_kernels.h"
#include "mechanisms/mechanism_spec.h"

namespace blur::collector {

namespace {

constexpr uint32_t kSeeds = blur::kPrefixHashSeeds;
constexpr uint32_t kCodes = blur::kWordAlphabet;  // the end code 0 and 27 characters

// A prefix or word with its reports pooled over the levels that carry it.
struct Candidate {
  blur::Word word;
  uint64_t pooled_reports = 0;
  uint64_t pooled_support = 0;
  double count = 0;    // its estimate's count, for ranking
  uint32_t first = 0;  // a finished word's first level (first_level_of_word)
};

// The spelled words' order (word < word as strings) without spelling them:
// characters from the first, the end before any character, '\'' (code 27)
// before the letters as in ASCII.
std::pair<uint64_t, uint64_t> text_order(const blur::Word& word) {
  uint64_t high = 0, low = 0;
  for (uint32_t i = 0; i < blur::kMaxWordLength; ++i) {
    const uint32_t code = i < word.length ? word.code(i) : 0;
    const uint64_t rank = code == 27 ? 1 : code == 0 ? 0 : code + 1;
    (i < 8 ? high : low) = (i < 8 ? high : low) << 5 | rank;
  }
  return {high, low};
}

// Ties of the beam's order: by the packed characters, so that the result
// does not depend on the number of threads.
bool packed_before(const blur::Word& x, const blur::Word& y) {
  return x.low < y.low || (x.low == y.low && x.high < y.high);
}

// The beam's order: by count, ties by the packed characters.
bool before(const Candidate& x, const Candidate& y) {
  return x.count > y.count || (x.count == y.count && packed_before(x.word, y.word));
}

// A child prefix on its level: all share the level's reports, so its count
// grows with its support, and the beam ranks by support (the same order).
struct Child {
  uint64_t support;
  blur::Word word;
};
bool child_before(const Child& x, const Child& y) {
  return x.support > y.support || (x.support == y.support && packed_before(x.word, y.word));
}

// The answer's order: by count, ties by the spelled word.
bool ranks_before(const Candidate& x, const Candidate& y) {
  return x.count > y.count || (x.count == y.count && text_order(x.word) < text_order(y.word));
}

// The tally's per-level report counts and the estimates over pooled levels.
class Decoder {
 public:
  Decoder(const MetricConfig& metric, const LevelTally& tally, uint64_t reports)
      : tally_(tally),
        reports_(reports),
        support_(metric),
        bits_(blur::PrefixExtension::bucket_bits(metric.epsilon_micros)),
        params_(mechanism_spec(metric.mechanism).params(metric)) {}

  uint32_t levels() const { return support_.levels(); }
  const LevelTally::Level& level(uint32_t l) const { return tally_.level(l); }
  const WordHashTable& table(uint32_t l) const { return support_.table(l); }
  uint64_t level_reports(uint32_t l) const { return tally_.level(l).reports; }

  // c_U over N_U pooled reports, scaled to n (scaled_count).
  CountEstimate scaled(uint64_t pooled_reports, uint64_t pooled_support) const {
    return scaled_count(reports_, pooled_reports, pooled_support, params_);
  }
  // Its count alone (scaled_count's, without the error): what ranking needs.
  double count(uint64_t pooled_reports, uint64_t pooled_support) const {
    if (pooled_reports == 0) return 0;
    const double m = static_cast<double>(pooled_reports);
    const double within = (static_cast<double>(pooled_support) / params_.weight - m * params_.q) /
                          (params_.p - params_.q);
    return within * (static_cast<double>(reports_) / m);
  }

  // `word` padded with ends over levels first..last.
  CountEstimate estimate(const blur::Word& word, uint32_t first, uint32_t last) const {
    uint64_t pooled_reports = 0, pooled_support = 0;
    std::vector<uint64_t> support;
    for (uint32_t l = first; l <= last; ++l) {
      (void)end_supports(level(l), table(l), {word}, &support, Cancellation());  // never cancelled
      pooled_reports += level_reports(l);
      pooled_support += support[0];
    }
    return scaled(pooled_reports, pooled_support);
  }

  // `e` (over levels first..last) with the fixed seed table's variance.
  CountEstimate with_table_variance(const CountEstimate& e, uint32_t first, uint32_t last,
                                    double others_squared) const {
    double pooled = 0, squares = 0;
    for (uint32_t l = first; l <= last; ++l) {
      const double m = static_cast<double>(level_reports(l));
      pooled += m;
      squares += m * m;
    }
    if (pooled == 0) return e;
    return with_seed_table_variance(e, params_, bits_, kSeeds, others_squared,
                                    squares / (pooled * pooled));
  }

 private:
  const LevelTally& tally_;
  uint64_t reports_;
  PrefixSupport support_;
  uint32_t bits_;
  OracleParams params_;
};

// A finished word of `length` characters is carried whole by the levels
// whose prefix length exceeds it, and by the last level.
uint32_t first_level_of_word(uint32_t length, uint32_t levels) {
  return std::min(length - 1, levels - 1);
}

Discovery cancelled(Discovery result) {
  result.cancelled = true;
  result.words.clear();
  return result;
}

// The finished words of the levels before the last, `pending` (their own
// level pooled), estimated: ranked by their own and the last level pooled
// (every word is carried by the last level, which holds half the reports),
// then the best `keep` pooled over all their levels and moved to
// `finished`; the others' rank counts go to `others` (for the seed table's
// variance). Adds the (word, level) supports summed to *evaluated. False
// if cancelled.
bool estimate_pending(const Decoder& decoder, std::vector<Candidate> pending, uint32_t keep,
                      std::vector<Candidate>* finished, std::vector<double>* others,
                      uint64_t* evaluated, const Cancellation& cancel) {
  const uint32_t last = decoder.levels() - 1;
  std::vector<blur::Word> batch;
  std::vector<uint64_t> support;
  for (const Candidate& c : pending) batch.push_back(c.word);
  if (!end_supports(decoder.level(last), decoder.table(last), batch, &support, cancel)) {
    return false;
  }
  *evaluated += batch.size();
  for (size_t i = 0; i < pending.size(); ++i) {
    Candidate& c = pending[i];
    c.pooled_reports += decoder.level_reports(last);
    c.pooled_support += support[i];
    c.count = decoder.count(c.pooled_reports, c.pooled_support);
  }
  if (pending.size() > keep) {
    std::nth_element(pending.begin(), pending.begin() + keep, pending.end(), before);
    for (size_t i = keep; i < pending.size(); ++i) others->push_back(pending[i].count);
    pending.resize(keep);
  }
  // The levels between each kept word's first and the last.
  for (uint32_t l = 1; l < last; ++l) {
    std::vector<size_t> at_level;
    batch.clear();
    for (size_t i = 0; i < pending.size(); ++i) {
      if (pending[i].first < l) {
        at_level.push_back(i);
        batch.push_back(pending[i].word);
      }
    }
    if (!end_supports(decoder.level(l), decoder.table(l), batch, &support, cancel)) return false;
    *evaluated += batch.size();
    for (size_t j = 0; j < at_level.size(); ++j) {
      pending[at_level[j]].pooled_reports += decoder.level_reports(l);
      pending[at_level[j]].pooled_support += support[j];
    }
  }
  for (Candidate& c : pending) {
    c.count = decoder.count(c.pooled_reports, c.pooled_support);
    finished->push_back(c);
  }
  return true;
}

// pem's discovery over a tally read by level.
Discovery discover_prefixes(const MetricConfig& metric, const LevelTally& tally, uint64_t reports,
                            const DiscoveryOptions& options) {
  Discovery result;
  result.reports = reports;
  if (reports == 0 || options.top_k == 0) return result;
  const Cancellation& cancel = options.cancellation();
  const Decoder decoder(metric, tally, reports);
  const uint32_t levels = decoder.levels();
  const uint32_t beam_width = discovery_beam(options);

  // Level l extends prefixes of l + 1 characters; level 0's are the 27
  // one-character prefixes, not estimated on their own. Each parent's
  // code-0 child is the parent as a finished word on its own level.
  std::vector<blur::Word> parents;
  for (uint32_t code = 1; code < kCodes; ++code)
    parents.push_back(blur::Word{0, 0, 1}.with(0, code));
  std::vector<Candidate> pending;   // finished on a level before the last
  std::vector<Candidate> finished;  // estimated from all their levels
  pending.reserve(size_t{beam_width} * levels);
  finished.reserve(size_t{beam_width} * (kCodes + 1));
  std::vector<uint64_t> sums;
  std::vector<Child> children;
  uint64_t evaluated = 0;  // (candidate, level) supports summed
  children.reserve(size_t{std::max(beam_width, kCodes)} * kCodes);
  for (uint32_t level = 0; level < levels && !parents.empty(); ++level) {
    const uint32_t at = blur::PrefixExtension::prefix_length(level) - 1;
    if (!child_supports(decoder.level(level), decoder.table(level), at, parents, &sums, cancel)) {
      return cancelled(result);
    }
    evaluated += parents.size() * kCodes;
    const bool last = level + 1 == levels;
    const uint64_t n_level = decoder.level_reports(level);
    children.clear();
    for (size_t p = 0; p < parents.size(); ++p) {
      const blur::Word& word = parents[p];  // `at` characters
      const uint64_t* support = sums.data() + p * kCodes;
      const uint32_t first = first_level_of_word(word.length, levels);
      const Candidate as_word{word, n_level, support[0], decoder.count(n_level, support[0]), first};
      (last ? finished : pending).push_back(as_word);
      for (uint32_t code = 1; code < kCodes; ++code) {
        blur::Word child = word.with(at, code);
        child.length = at + 1;
        if (last) {  // as long as words get: a whole word
          finished.push_back(Candidate{child, n_level, support[code],
                                       decoder.count(n_level, support[code]), level});
        } else {
          children.push_back(Child{support[code], child});
        }
      }
    }
    if (children.size() > beam_width) {
      std::nth_element(children.begin(), children.begin() + beam_width, children.end(),
                       child_before);
      children.resize(beam_width);
    }
    parents.clear();
    for (const Child& c : children) parents.push_back(c.word);
  }
  std::vector<double> others;  // rank counts of the pending words not kept
  // Finished words estimated from all their levels: 4 top_k (at least 64,
  // at most the beam) of the best ranked.
  const uint32_t keep = std::min(beam_width, std::max(4 * std::min(options.top_k, kMaxBeam), 64u));
  if (!estimate_pending(decoder, std::move(pending), keep, &finished, &others, &evaluated,
                        cancel)) {
    return cancelled(result);
  }

  // Every finished word's (clipped) estimate enters the others' table
  // variance; the candidates never finished are near zero.
  double all_squared = 0;
  for (const Candidate& w : finished)
    all_squared += std::max(w.count, 0.0) * std::max(w.count, 0.0);
  for (const double c : others) all_squared += std::max(c, 0.0) * std::max(c, 0.0);
  std::sort(finished.begin(), finished.end(), ranks_before);
  answer_significant(
      finished.size(), all_squared, options, [&](size_t i) { return finished[i].count; },
      [&](size_t i, double others_squared) {
        const Candidate& w = finished[i];
        return decoder.with_table_variance(decoder.scaled(w.pooled_reports, w.pooled_support),
                                           w.first, levels - 1, others_squared);
      },
      [&](size_t i) { return spell(finished[i].word); }, &result.words);
  result.candidates_evaluated = static_cast<uint32_t>(std::min<uint64_t>(evaluated, UINT32_MAX));
  return result;
}

}  // namespace

uint32_t discovery_beam(const DiscoveryOptions& options) {
  const uint32_t wanted =
      options.beam != 0 ? options.beam : std::max(8 * std::min(options.top_k, kMaxBeam), 64u);
  return std::min(wanted, kMaxBeam);
}

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

double seed_table_variance(OracleParams params, uint32_t bucket_bits, uint32_t seeds,
                           double others_squared, double level_weight) {
  const double g = std::ldexp(1.0, static_cast<int>(bucket_bits));
  const double p = params.p, q = params.q, q_other = (1 - p) / (g - 1);
  const double share = (1 / g) * (1 - 1 / g) / seeds;
  const double ratio = (p - q_other) / (p - q);
  return share * ratio * ratio * others_squared * level_weight;
}

CountEstimate with_seed_table_variance(const CountEstimate& e, OracleParams params,
                                       uint32_t bucket_bits, uint32_t seeds,
                                       double others_squared, double level_weight) {
  const double extra =
      seed_table_variance(params, bucket_bits, seeds, others_squared, level_weight);
  const double error = std::sqrt(e.std_error * e.std_error + extra);
  return CountEstimate{e.count, error, e.count - kZ95 * error, e.count + kZ95 * error};
}

Discovery discover_words(const MetricConfig& metric, const std::vector<uint64_t>& tally,
                         uint64_t reports, const DiscoveryOptions& options) {
  if (mechanism_spec(metric.mechanism).joins_fragments) {
    return discover_words_by_fragments(metric, tally, reports, options);
  }
  return discover_prefixes(metric, LevelTally(metric, tally), reports, options);
}

Discovery discover_words(const Aggregate& aggregate, const DiscoveryOptions& options) {
  const MetricConfig& metric = aggregate.metric();
  if (mechanism_spec(metric.mechanism).joins_fragments) {
    if (const std::vector<uint64_t>* dense = aggregate.dense_tally()) {
      return discover_words_by_fragments(metric, *dense, aggregate.reports(), options);
    }
    return discover_words_by_fragments(metric, aggregate.tally(), aggregate.reports(), options);
  }
  return discover_prefixes(metric, LevelTally(aggregate), aggregate.reports(), options);
}

CountEstimate estimate_candidate(const MetricConfig& metric, const std::vector<uint64_t>& tally,
                                 uint64_t reports, const blur::Word& candidate, bool finished) {
  if (mechanism_spec(metric.mechanism).joins_fragments) {
    if (!finished) return CountEstimate{0, INFINITY, -INFINITY, INFINITY};  // words only
    return FragmentPuzzleDecoder(metric, tally, reports).word(candidate);
  }
  const LevelTally levels(metric, tally);
  const Decoder decoder(metric, levels, reports);
  const uint32_t first = finished ? first_level_of_word(candidate.length, decoder.levels())
                                  : candidate.length - blur::PrefixExtension::kFirstPrefixLength;
  const uint32_t last = finished ? decoder.levels() - 1 : first;
  return decoder.estimate(candidate, first, last);
}

PrefixSupport::PrefixSupport(const MetricConfig& metric)
    : levels_(blur::PrefixExtension::levels(metric.domain_size)),
      bits_(blur::PrefixExtension::bucket_bits(metric.epsilon_micros)) {
  for (uint32_t level = 0; level < levels_; ++level) {
    tables_.push_back(
        shared_word_table(level, blur::PrefixExtension::prefix_length(level), kSeeds, bits_));
  }
}

void PrefixSupport::hash(uint32_t level, const blur::Word& word, uint8_t* hashes) const {
  table(level).hash(word, hashes);
}

uint64_t PrefixSupport::support(const std::vector<uint64_t>& tally, uint32_t level,
                                const uint8_t* hashes, const uint8_t* extra) const {
  return table(level).support(tally.data() + (size_t{level} * kSeeds << bits_), hashes, extra);
}

const uint8_t* PrefixSupport::row(uint32_t level, uint32_t position, uint32_t code) const {
  return table(level).row(position, code);
}

uint64_t PrefixSupport::count(const std::vector<uint64_t>& tally, uint32_t level,
                              const blur::Word& word) const {
  std::vector<uint8_t> hashes(kSeeds);
  hash(level, word.prefix(blur::PrefixExtension::prefix_length(level)), hashes.data());
  return support(tally, level, hashes.data(), nullptr);
}

}  // namespace blur::collector
