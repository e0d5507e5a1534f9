// Word discovery over a sequence-fragment-puzzle metric (sfp; the device
// side is sdk/include/blur/discovery/fragment_puzzle.h), as Apple's server
// does ("Learning with Privacy at Scale", 2017):
//
// 1. Per fragment position, estimate every (puzzle piece, two characters)
//    pair from that position's reports: 256 x 757 values, each the sum over
//    the 1,024 fragment seeds of one tally cell (the hash is linear, so a
//    value's bucket is its piece's xor its characters'); then the
//    position's plug-in squares (fragment_squares), for the fragment seed
//    table's variance in each estimate's error.
// 2. Per piece, join that piece's significant fragments position by
//    position into candidate words, keeping a beam of the unfinished joins
//    whose fragments' estimates sum highest; a finished candidate must
//    hash to the piece it was built from.
// 3. Rank the candidates by the word sketch (every report carries it) and
//    answer the top k that are significant.
//
// Work per query, whatever the reports: step 1 is 2^10 lookups per
// (position, piece, pair), or, on a position with few reports, a step per
// nonzero cell and pair (fragment_support); step 2 at most kDefaultBeam x
// 32 joins per piece and position, keeping at most
// kFinishedJoinsPerPiece finished ones per piece; step 3 at most 256 x
// kFinishedJoinsPerPiece = 32,768 candidates, 2^14 lookups each (10^6
// honest devices give about 9,000, 35 a piece).
//
// Estimates (docs/math.md §3.12): randomized response over 2^g buckets at
// epsilon / 2, p = e^{eps/2} / (e^{eps/2} + 2^g - 1), q = 2^-g. A fragment
// estimate uses its position's N_i reports scaled to all n (variance as
// word_discovery.h's), a word estimate all n reports; each adds its fixed
// seed table's variance as PEM's (seed_table_variance(): 2^10 fragment
// seeds per position, 2^14 word seeds), with plug-in counts of the other
// fragments of the position (fragment_squares()) or of the other
// candidate words.
#ifndef BLUR_COLLECTOR_DISCOVERY_FRAGMENT_PUZZLE_DISCOVERY_H
#define BLUR_COLLECTOR_DISCOVERY_FRAGMENT_PUZZLE_DISCOVERY_H

#include <cstdint>
#include <vector>

#include "blur/discovery/word.h"
#include "discovery/word_discovery.h"
#include "discovery/word_hash_table.h"
#include "estimate/frequency_oracle.h"
#include "mechanisms/fragment_puzzle.h"
#include "model/metric_config.h"
#include "util/cancellation.h"

namespace blur::collector {

// The tally's layout: mechanisms/fragment_puzzle.h.

// The cap of steps 2 and 3 (above).
inline constexpr size_t kFinishedJoinsPerPiece = 128;
// A fragment enters its position's plug-in sum of squares (fragment_squares)
// when its estimate is this many standard errors, the table's included,
// above zero: a fragment nobody has passes with probability 3.4e-6, about
// 0.7 of a position's 193,792 (piece, pair) triples.
inline constexpr double kFragmentSquaresZ = 4.5;

class FragmentPuzzleDecoder {
 public:
  // `tally` must outlive the decoder.
  FragmentPuzzleDecoder(const MetricConfig& metric, const std::vector<uint64_t>& tally,
                        uint64_t reports);

  uint32_t positions() const { return shape_.positions; }
  uint64_t position_reports(uint32_t position) const { return position_reports_[position]; }

  // Devices whose word has puzzle piece `piece` and character codes
  // (first, second) at `position`'s fragment (the end code past the word),
  // without the fragment seed table's variance (with_fragment_table_variance
  // adds it).
  CountEstimate fragment(uint32_t position, uint32_t piece, uint32_t first, uint32_t second) const;
  // A fragment's estimate from its support at `position` (fragment_support),
  // without the table's variance: scaled(position_reports(position), support).
  CountEstimate fragment_estimate(uint32_t position, uint64_t support) const;
  // The plug-in sum of c_v^2 over one position's fragments, from their
  // estimates without the table's variance (every triple of the position,
  // or any subset holding its heavy fragments): the squares of the largest
  // set of the strongest estimates each at least kFragmentSquaresZ standard
  // errors above zero once the table's variance of that set's sum is added
  // to its error. Fragments nobody has (and the table's ghosts of the heavy
  // ones in other triples) stay out; so do light fragments, whose squares
  // add little.
  double fragment_squares(const std::vector<CountEstimate>& estimates) const;
  // `e`, a fragment's estimate, with the fragment seed table's variance:
  // `position_squares` from fragment_squares() of its position, less the
  // fragment's own (clipped) square.
  CountEstimate with_fragment_table_variance(const CountEstimate& e,
                                             double position_squares) const;
  // Every fragment's support at `position`: support[(first * 28 + second)
  // * 256 + piece], 0 for impossible pairs (an end code then a character).
  // Dense: 2^10 lookups per (pair, piece); sparse (few nonzero cells), the
  // pieces whose bucket matches, per cell and pair. Empty if cancelled.
  std::vector<uint64_t> fragment_support(uint32_t position,
                                         const Cancellation& cancel = Cancellation()) const;
  // Devices whose word is exactly `word` (word sketch), without the seed
  // table's variance.
  CountEstimate word(const blur::Word& word) const;
  // `e` with the word seed table's variance: `others_squared` = sum of
  // c_w^2 over the other words (plug-in).
  CountEstimate with_word_table_variance(const CountEstimate& e, double others_squared) const;

  // c = (I - N q) / (p - q) over N reports, scaled to all reports.
  CountEstimate scaled(uint64_t pooled_reports, uint64_t support) const;
  const WordHashTable& word_table() const { return *word_table_; }
  const uint64_t* word_counts() const { return tally_.data(); }

 private:
  const std::vector<uint64_t>& tally_;
  uint64_t reports_;
  FragmentPuzzleShape shape_;
  OracleParams params_;
  std::shared_ptr<const WordHashTable> word_table_;
  std::vector<uint64_t> position_reports_;
};

Discovery discover_words_by_fragments(const MetricConfig& metric,
                                      const std::vector<uint64_t>& tally, uint64_t reports,
                                      const DiscoveryOptions& options);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_DISCOVERY_FRAGMENT_PUZZLE_DISCOVERY_H
