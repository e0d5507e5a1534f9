// A count that only goes up (requests, reports): one relaxed atomic add per
// event, so counting on the ingest path costs no lock.
#ifndef BLUR_COLLECTOR_OBSERVE_COUNTER_H
#define BLUR_COLLECTOR_OBSERVE_COUNTER_H

#include <atomic>
#include <cstdint>

namespace blur::collector::observe {

class Counter {
 public:
  void add(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

}  // namespace blur::collector::observe

#endif  // BLUR_COLLECTOR_OBSERVE_COUNTER_H
