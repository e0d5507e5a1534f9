// Support counts: for each value v of a metric's domain, how many reports
// support v (Wang et al. 2017, the I_v of the pure-protocol estimator). Each
// mechanism defines which values a report supports; this is the one place
// that rule lives, used by the server's estimate, the offline fleet and the
// simulator's `randomize` output alike.
//
//   randomized response (rr, grr): a report supports exactly its value;
//   unary encodings (sue, oue): a report supports every value whose bit is set;
//   Hadamard response (hr): report j supports v iff popcount((v + 1) & j) is
//   even (counted for all v at once by a Walsh-Hadamard transform);
//   local hashing (olh, blh): (a, b, y) supports v iff top(a * v + b) = y,
//   i.e. top(a * v) = y xor top(b): reports are tallied by (a, that key) and
//   a * v is evaluated once per distinct a and value;
//   RAPPOR (rappor): a report (cohort c, filter r) supports v with weight
//   sum_j r[position_j(v, c)], the number of v's h Bloom bits set (0..h; a
//   fractional support of weight / h): filters are tallied per cohort by
//   byte value, and v's positions are hashed once per cohort.
#ifndef BLUR_COLLECTOR_ESTIMATE_SUPPORT_COUNTER_H
#define BLUR_COLLECTOR_ESTIMATE_SUPPORT_COUNTER_H

#include <cstdint>
#include <string>
#include <vector>

#include "metrics/metric_config.h"

namespace blur::collector {

class SupportCounter {
 public:
  explicit SupportCounter(const MetricConfig& metric);

  // Adds `multiplicity` validated reports with this payload: `report_value`
  // for scalar payloads (local hashing: pack_local_hash(a, b, bucket)),
  // `bits` for bit vectors.
  void add(uint64_t report_value, const std::string& bits, uint64_t multiplicity = 1);

  // A local-hashing report as one integer (also its form in the store).
  static uint64_t pack_local_hash(uint32_t a, uint32_t b, uint32_t bucket) {
    return uint64_t{a} << 32 | uint64_t{b} << 16 | bucket;
  }

  const MetricConfig& metric() const { return metric_; }
  // I_v for v in [0, domain_size) (RAPPOR: h I_v, the summed weights).
  std::vector<uint64_t> counts() const;
  uint64_t reports() const { return reports_; }

 private:
  std::vector<uint64_t> bloom_counts() const;
  MetricConfig metric_;
  std::vector<uint64_t> tally_;  // per value, per report index (hr), per (a, key) (olh, blh)
  // Bit vectors: for each byte position (per cohort for RAPPOR), how many
  // reports had each byte value (cohorts x bytes x 256). One increment per byte instead of one per
  // set bit; counts() expands it to per-value counts.
  std::vector<uint64_t> byte_tally_;
  uint64_t reports_ = 0;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_ESTIMATE_SUPPORT_COUNTER_H
