#include "cli/day_rollups.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace blur::collector {

DayRollUps::DayRollUps(Store& store, observe::CollectorMetrics* metrics)
    : store_(store), metrics_(metrics), thread_([this] { run(); }) {}

DayRollUps::~DayRollUps() { stop(); }

void DayRollUps::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cancel_ = true;
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool DayRollUps::pass() {
  const auto started = std::chrono::steady_clock::now();
  const Cancellation cancel(Cancellation::Clock::time_point::max(), &cancel_);
  auto done = store_.roll_up(static_cast<int64_t>(std::time(nullptr)), &cancel);
  if (!done) {
    if (metrics_ != nullptr) metrics_->rollup_failures.add();
    std::fprintf(stderr, "blur-collector: day roll-up failed (retried in %lld s): %s\n",
                 static_cast<long long>(kRetrySeconds), done.error().message.c_str());
    return false;
  }
  if (metrics_ != nullptr) metrics_->rollup_days.add(done->days);
  if (done->days != 0) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::printf(
        "blur-collector: rolled up %llu metric days (%llu bucket rows into %llu day rows)"
        " in %.3g s\n",
        static_cast<unsigned long long>(done->days),
        static_cast<unsigned long long>(done->bucket_rows),
        static_cast<unsigned long long>(done->day_rows), seconds);
    std::fflush(stdout);
  }
  return true;
}

void DayRollUps::run() {
  bool succeeded = pass();
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    const int64_t now = static_cast<int64_t>(std::time(nullptr));
    const int64_t next_midnight = now - now % kSecondsPerDay + kSecondsPerDay;
    const int64_t wait =
        succeeded ? next_midnight + kDelayAfterMidnightSeconds - now : kRetrySeconds;
    if (wake_.wait_for(lock, std::chrono::seconds(wait), [this] { return stopping_; })) break;
    lock.unlock();
    succeeded = pass();
    lock.lock();
  }
}

}  // namespace blur::collector
