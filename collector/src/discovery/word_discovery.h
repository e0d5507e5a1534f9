// Word discovery: the heavy hitters of a prefix-extension metric (pem; the
// device side is sdk/include/blur/discovery/prefix_extension.h), found by
// growing candidate prefixes one character at a time over the aggregated
// tally, as PEM's server does (Wang, Li, Jha, TDSC 2019), with two changes:
//
// - A finished word (a candidate whose next character is the end) is
//   estimated from every level whose prefix length exceeds the word's
//   length (those levels' reports carry the whole word), pooled; only
//   unfinished prefixes are estimated from their own level alone. Short,
//   frequent words so get almost all the reports instead of 1/levels.
// - Pruning keeps a beam wider than k (DiscoveryOptions::beam) of
//   unfinished prefixes, so a true top-k word is not lost to a tie at a
//   level. Every finished word seen is ranked by its first and last
//   levels' reports (the last level holds half of them), and the best 4k
//   (at least 64, at most the beam) are estimated from all their levels:
//   the candidates for the answer, with the last level's words.
//
// Cost, bounded whatever the reports (DiscoveryOptions::beam, at most
// kMaxBeam): per level, 28 x beam children (the end code included) are
// estimated from that level; the finished words of the levels before the
// last (beam per level) are ranked by their own and the last level's
// reports pooled, and at most `beam` of them are estimated from all their
// levels; the last level's children are words. Each estimate on a level is
// at most one lookup per seed (2^14), and on a sparse level one step per
// nonzero cell (level_tally.h, support_kernels.h): at most about
// 2^14 x beam x 30 x levels lookups, 1.9 G at beam 256 and 15 levels,
// reached only when every level is dense (millions of reports), and
// proportional to the reports below that. The tally is read per level, dense
// or sparse, never filled in whole.
//
// Estimates (docs/math.md §3.11): over the levels U that carry a candidate,
// with N_U reports and I_U of them supporting it, the local-hashing
// estimate c_U = (I_U - N_U q) / (p - q) scaled to all n reports, c = c_U n
// / N_U, unbiased; its variance adds to the randomized response's the
// sampling of N_U reports out of n: (n / N_U)^2 N_U f (1 - f) (1 - N_U / n).
#ifndef BLUR_COLLECTOR_DISCOVERY_WORD_DISCOVERY_H
#define BLUR_COLLECTOR_DISCOVERY_WORD_DISCOVERY_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "blur/discovery/word.h"
#include "discovery/word_hash_table.h"
#include "estimate/device_clustering.h"
#include "estimate/frequency_oracle.h"
#include "model/metric_config.h"
#include "util/cancellation.h"

namespace blur::collector {

class Aggregate;

// The widest beam (unfinished prefixes kept per level, and finished words
// estimated from all their levels), whatever top_k or DiscoveryOptions::beam
// ask for: the work per query is linear in it.
inline constexpr uint32_t kMaxBeam = 1024;

struct DiscoveryOptions {
  uint32_t top_k = 32;
  // Unfinished prefixes kept per level; 0: max(8 top_k, 64). At most kMaxBeam.
  uint32_t beam = 0;
  // A word is answered only if its estimate is at least this many standard
  // errors above zero: tens of thousands of candidates are evaluated, and
  // the noise of the ones nobody has would otherwise fill a top-k that the
  // reports cannot support (4.5: about 5% of runs would let one absent word
  // through at 10^5 candidates). Fewer than top_k words then come back.
  double min_z = 4.5;
  // Checked between units of work (a block of seeds, a candidate); once
  // requested, discovery returns at once with Discovery::cancelled set.
  // Null: never.
  const Cancellation* cancel = nullptr;

  // *cancel, or one never requested.
  const Cancellation& cancellation() const {
    static const Cancellation kNever;
    return cancel != nullptr ? *cancel : kNever;
  }
};

// The beam a discovery with `options` uses (pem; sfp: its own per piece).
uint32_t discovery_beam(const DiscoveryOptions& options);

struct DiscoveredWord {
  std::string word;
  CountEstimate estimate;  // devices (reports) with exactly this word
};

struct Discovery {
  uint64_t reports = 0;
  uint32_t candidates_evaluated = 0;  // (candidate, level) supports summed
  std::vector<DiscoveredWord> words;  // at most top_k, decreasing estimate, each significant
  bool cancelled = false;             // DiscoveryOptions::cancel was requested: no words
};

// The estimators' shared core (docs/math.md §3.11), for pem's and sfp's
// decoders: c = (I - N q) / (p - q) over N of the n = `reports` reports,
// scaled to n, with the sampling of N among n in its variance.
CountEstimate scaled_count(uint64_t reports, uint64_t pooled_reports, uint64_t support,
                           OracleParams params);
// The fixed seed table's variance (docs/math.md §3.11): another value w
// (a word, a prefix, or sfp's (piece, fragment)) shares the candidate's
// bucket on a fraction f of a level's `seeds`, 2^-g on average with
// variance 2^-g (1 - 2^-g) / seeds, independently per level, so its
// reports add c_w (f - 2^-g)(p - q') supports per level (q' = (1 - p) /
// (2^g - 1)). `others_squared`: sum of c_w^2 over the other values
// (plug-in); `level_weight`: sum over the pooled levels of n_l^2, over
// (sum of n_l)^2 (1 for a single level or position).
double seed_table_variance(OracleParams params, uint32_t bucket_bits, uint32_t seeds,
                           double others_squared, double level_weight);
// `e` with seed_table_variance() added to its variance.
CountEstimate with_seed_table_variance(const CountEstimate& e, OracleParams params,
                                       uint32_t bucket_bits, uint32_t seeds,
                                       double others_squared, double level_weight);
// The answer both decoders end with: the candidates in rank order, each
// with its rank count c_i (clipped at 0); a candidate with c_i > 0 gets
// `estimate(i, others_squared)`, its estimate with the seed table's
// variance of the others (others_squared = all_squared - c_i^2, all_squared
// the sum of every candidate's clipped c^2), and the first top_k whose
// estimate is at least min_z standard errors are answered, in rank order.
// `count(i)`: c_i; `word(i)`: the spelling.
template <typename Count, typename Estimate, typename Word>
void answer_significant(size_t candidates, double all_squared, const DiscoveryOptions& options,
                        Count count, Estimate estimate, Word word,
                        std::vector<DiscoveredWord>* answer) {
  for (size_t i = 0; i < candidates && answer->size() < options.top_k; ++i) {
    const double c = count(i);
    if (c <= 0) continue;
    const CountEstimate e = estimate(i, all_squared - c * c);
    if (e.count >= options.min_z * e.std_error) answer->push_back(DiscoveredWord{word(i), e});
  }
}
// `e` for reports of which a device may send several: its whole variance
// (report terms, level sampling and seed table alike) times the most
// reports one device contributed (DeviceClustering::variance with no
// per-report floor or ceiling), a conservative bound. discover_words()
// selects with the independent-report errors; the answer's intervals are
// these, and they are conditional on the selection (the words were chosen
// on the same reports).
CountEstimate with_device_clustering(const CountEstimate& e, const DeviceClustering& clustering);
// The word's characters as text.
std::string spell(const blur::Word& word);

// `tally`: a word-discovery metric's aggregate tally (registry/
// mechanism_spec.h) of `reports` reports: pem's as above, sfp's as
// fragment_puzzle_discovery.h.
Discovery discover_words(const MetricConfig& metric, const std::vector<uint64_t>& tally,
                         uint64_t reports, const DiscoveryOptions& options);
// The same over a word-discovery metric's aggregate, read as it is kept
// (a sparse pem tally is never filled in): what estimates use.
Discovery discover_words(const Aggregate& aggregate, const DiscoveryOptions& options);

// One candidate's estimate from the same tally: a whole word (`finished`:
// devices whose word is exactly it) or, for pem, a prefix of 2 to the
// metric's longest word characters (devices whose word starts with it),
// without the seed table's variance (which needs the other words'
// estimates). sfp estimates whole words only (else an infinite error).
CountEstimate estimate_candidate(const MetricConfig& metric, const std::vector<uint64_t>& tally,
                                 uint64_t reports, const blur::Word& candidate, bool finished);

// The collector's support rule, for tests and tools: how many reports of
// `level` in `tally` support `word`'s prefix of that level's length.
// Shares the per-level tables of the hash (shared_word_table()).
class PrefixSupport {
 public:
  explicit PrefixSupport(const MetricConfig& metric);
  uint32_t levels() const { return levels_; }
  uint64_t count(const std::vector<uint64_t>& tally, uint32_t level, const blur::Word& word) const;

  // The candidate's buckets under each seed of `level` into hashes[0..seeds).
  void hash(uint32_t level, const blur::Word& word, uint8_t* hashes) const;
  // Reports of `level` whose bucket is hashes[s] xor extra[s] (extra may be
  // null): the sum over seeds of the tally at (level, s, that bucket).
  uint64_t support(const std::vector<uint64_t>& tally, uint32_t level, const uint8_t* hashes,
                   const uint8_t* extra) const;
  // Level `level`'s buckets for character code `code` at `position`.
  const uint8_t* row(uint32_t level, uint32_t position, uint32_t code) const;
  const WordHashTable& table(uint32_t level) const { return *tables_[level]; }

 private:
  uint32_t levels_;
  uint32_t bits_;
  std::vector<std::shared_ptr<const WordHashTable>> tables_;  // one per level
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_DISCOVERY_WORD_DISCOVERY_H
