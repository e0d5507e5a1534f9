// A prefix-extension (pem) tally split by level, as the decoder reads it:
// each level either dense (every (seed, bucket) count) or sparse (the
// seeds that have reports, each with its nonzero (bucket, count) cells).
//
// Why both: the work of estimating a candidate on a level is one lookup per
// seed on a dense level, and one step per nonzero cell on a sparse one. A
// level is kept sparse while it has fewer than kDenseCellsPerSeed cells per
// seed on average, so the decoder's work on a level is at most the dense
// work, and far less for the levels (or the time buckets) with few reports:
// 2,880 reports spread over 720 hourly buckets make 720 tallies of 4 cells.
// Building one costs O(nonzero cells + levels x seeds); the full dense tally
// (levels x 2^14 seeds x 2^g counts, 126 MB at 15 levels and g = 6) is
// never filled in.
#ifndef BLUR_COLLECTOR_DISCOVERY_LEVEL_TALLY_H
#define BLUR_COLLECTOR_DISCOVERY_LEVEL_TALLY_H

#include <cstdint>
#include <vector>

#include "aggregate/aggregate.h"
#include "model/metric_config.h"

namespace blur::collector {

class LevelTally {
 public:
  // A sparse level costs about 6 operations per cell and a dense one about
  // 112 per seed (28 lookups of 4): dense from 19 cells per seed on.
  static constexpr uint32_t kDenseCellsPerSeed = 19;

  struct Level {
    uint64_t reports = 0;
    // Dense: counts[seed << bucket_bits | bucket]; null for a sparse level.
    const uint64_t* dense = nullptr;
    // Sparse: the seeds with reports, increasing; seed seeds[i] has the
    // cells j in [first[i], first[i + 1]): counts[j] reports in buckets[j].
    std::vector<uint32_t> seeds;
    std::vector<uint32_t> first;
    std::vector<uint8_t> buckets;
    std::vector<uint64_t> counts;

    // Columns: every seed of a dense level, the seeds with reports of a
    // sparse one.
    uint32_t columns() const;
    uint32_t seed(uint32_t column) const { return dense != nullptr ? column : seeds[column]; }
  };

  // Over a pem aggregate's tally; a dense one is read in place, so
  // `aggregate` must outlive this.
  explicit LevelTally(const Aggregate& aggregate);
  // Over a dense tally (read in place: it must outlive this).
  LevelTally(const MetricConfig& metric, const std::vector<uint64_t>& tally);
  LevelTally(const LevelTally&) = delete;
  LevelTally& operator=(const LevelTally&) = delete;

  uint32_t levels() const { return static_cast<uint32_t>(levels_.size()); }
  uint32_t bucket_bits() const { return bits_; }
  const Level& level(uint32_t l) const { return levels_[l]; }

 private:
  uint32_t bits_;
  std::vector<Level> levels_;
  std::vector<std::vector<uint64_t>> dense_storage_;  // levels densified here
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_DISCOVERY_LEVEL_TALLY_H
