// A distribution over fixed buckets (latencies, commit sizes). observe() is
// a binary search over the bounds and three relaxed atomic updates: no lock.
//
// A reader (snapshot()) may see an observation half done while it happens;
// its cumulative counts are made from the buckets it read, so they are
// always cumulative and end with the count, as the exposition format needs.
#ifndef BLUR_COLLECTOR_OBSERVE_HISTOGRAM_H
#define BLUR_COLLECTOR_OBSERVE_HISTOGRAM_H

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace blur::collector::observe {

class Histogram {
 public:
  // Upper bounds (inclusive), finite and strictly increasing; the +Inf
  // bucket is implicit. Bounds that break the rule are dropped.
  explicit Histogram(std::vector<double> upper_bounds);

  // A NaN is ignored (it belongs to no bucket).
  void observe(double value);

  struct Snapshot {
    std::vector<double> upper_bounds;
    std::vector<uint64_t> cumulative;  // one per bound, then +Inf (== count)
    uint64_t count = 0;
    double sum = 0;
  };
  Snapshot snapshot() const;

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // per bucket, bounds_.size() + 1
  std::atomic<double> sum_{0};
};

// Bounds for request and commit latencies in seconds, 0.5 ms to 10 s.
std::vector<double> latency_buckets_seconds();

}  // namespace blur::collector::observe

#endif  // BLUR_COLLECTOR_OBSERVE_HISTOGRAM_H
