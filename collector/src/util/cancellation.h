// When a long read (an estimate, a series, a word discovery) must give up:
// its deadline passed, or the process is stopping. Cooperative: the work
// asks between units (a candidate prefix, a block of seeds, a stored row, a
// series period), so it stops within one unit of either event.
#ifndef BLUR_COLLECTOR_UTIL_CANCELLATION_H
#define BLUR_COLLECTOR_UTIL_CANCELLATION_H

#include <atomic>
#include <chrono>

namespace blur::collector {

class Cancellation {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Cause { kNone, kDeadline, kStopping };

  // Never cancelled (offline tools, tests).
  Cancellation() = default;
  // Cancelled once `deadline` has passed or `*stopping` is set (either may
  // be absent: Clock::time_point::max(), nullptr). `stopping` must outlive
  // this.
  Cancellation(Clock::time_point deadline, const std::atomic<bool>* stopping)
      : deadline_(deadline), stopping_(stopping) {}

  // A clock read and an atomic load: cheap enough per unit of work.
  Cause cause() const {
    if (stopping_ != nullptr && stopping_->load(std::memory_order_relaxed)) {
      return Cause::kStopping;
    }
    if (deadline_ != Clock::time_point::max() && Clock::now() >= deadline_) {
      return Cause::kDeadline;
    }
    return Cause::kNone;
  }
  bool requested() const { return cause() != Cause::kNone; }
  Clock::time_point deadline() const { return deadline_; }

 private:
  Clock::time_point deadline_ = Clock::time_point::max();
  const std::atomic<bool>* stopping_ = nullptr;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_UTIL_CANCELLATION_H
