// The pem decoder's inner loops: how many reports of one level support each
// of many candidates, over a LevelTally's level (dense or sparse).
//
// A candidate's support is the sum over the level's seeds of the count at
// (seed, its bucket under that seed); the hash is linear over GF(2), so a
// child's bucket is its parent's xor its last character's row
// (word_hash_table.h). The loops go seed block by seed block, every
// candidate within a block, so a block's counts (64 seeds: 32 KB dense at
// g = 6) stay in the cache while every candidate reads them: the work is
// one lookup per (candidate, seed) on a dense level and one step per
// (candidate, nonzero cell) on a sparse one.
#ifndef BLUR_COLLECTOR_DISCOVERY_SUPPORT_KERNELS_H
#define BLUR_COLLECTOR_DISCOVERY_SUPPORT_KERNELS_H

#include <cstdint>
#include <vector>

#include "blur/discovery/word.h"
#include "discovery/level_tally.h"
#include "discovery/word_hash_table.h"
#include "util/cancellation.h"

namespace blur::collector {

// For every parent (`at` characters, at < the level's prefix length):
// sums[p * 28 + c] = the level's reports supporting the parent followed by
// code c at position `at`, c = 0 (the end: the parent as a finished word)
// to 27. False, with `sums` incomplete, if `cancel` was requested.
bool child_supports(const LevelTally::Level& level, const WordHashTable& table, uint32_t at,
                    const std::vector<blur::Word>& parents, std::vector<uint64_t>* sums,
                    const Cancellation& cancel);

// For every word (no longer than the level's prefix): out[w] = the level's
// reports supporting the word padded with ends. False if cancelled.
bool end_supports(const LevelTally::Level& level, const WordHashTable& table,
                  const std::vector<blur::Word>& words, std::vector<uint64_t>* out,
                  const Cancellation& cancel);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_DISCOVERY_SUPPORT_KERNELS_H
