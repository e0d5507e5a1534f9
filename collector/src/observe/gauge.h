// A value that goes up and down (open connections, bytes on disk), set or
// moved with relaxed atomics.
#ifndef BLUR_COLLECTOR_OBSERVE_GAUGE_H
#define BLUR_COLLECTOR_OBSERVE_GAUGE_H

#include <atomic>
#include <cstdint>

namespace blur::collector::observe {

class Gauge {
 public:
  void set(int64_t value) { value_.store(value, std::memory_order_relaxed); }
  void add(int64_t delta) { value_.fetch_add(delta, std::memory_order_relaxed); }
  int64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_{0};
};

}  // namespace blur::collector::observe

#endif  // BLUR_COLLECTOR_OBSERVE_GAUGE_H
