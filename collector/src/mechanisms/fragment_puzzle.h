// Sequence fragment puzzle (sfp, word discovery): a report (position i,
// fragment seed t, word seed s, buckets (y_f, y_w)) supports every word w
// with h_s(w) = y_w and every (piece, fragment) x of position i with
// h_{i,t}(x) = y_f; tally = count per (s, y_w), then per (i, t, y_f).
// discovery/fragment_puzzle_discovery.h joins fragments into words.
#ifndef BLUR_COLLECTOR_MECHANISMS_FRAGMENT_PUZZLE_H
#define BLUR_COLLECTOR_MECHANISMS_FRAGMENT_PUZZLE_H

#include <cstddef>
#include <cstdint>

#include "blur/discovery/fragment_puzzle.h"
#include "mechanisms/oracle_params.h"
#include "model/incoming_report.h"
#include "model/metric_config.h"

namespace blur::collector {

// A stored report's five fields: IncomingReport keeps them packed as a
// local hash (hash_a, hash_b, value), unpacked by the SDK's one definition
// of that packing (blur::FragmentPuzzleFields).
blur::FragmentPuzzleFields fragment_puzzle_fields(const IncomingReport& report);

// The tally's layout: the word sketch's cells word_seed << g | bucket, then
// per position the fragment sketch's (position * 1024 + fragment_seed) << g
// | bucket.
struct FragmentPuzzleShape {
  uint32_t positions;    // fragment positions (SequenceFragmentPuzzle::positions)
  uint32_t bucket_bits;  // g of both sketches
  size_t word_cells() const;
  size_t fragment_offset(uint32_t position) const;
  size_t cells() const;
};
FragmentPuzzleShape fragment_puzzle_shape(const MetricConfig& metric);
// p and q of each half: randomized response over 2^g buckets at eps / 2.
OracleParams fragment_puzzle_params(const MetricConfig& metric);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_MECHANISMS_FRAGMENT_PUZZLE_H
