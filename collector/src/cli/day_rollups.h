// The serving collector's day roll-ups (Store::roll_up): one pass at start
// (the closed days of an upgraded or long-stopped store) and one after each
// UTC midnight, on a thread of their own. A pass that rolled up something
// logs a line; /metrics counts the days rolled up and the failed passes
// (a failed pass is retried a minute later; until then estimates read the
// bucket rows, which is slower, never wrong).
#ifndef BLUR_COLLECTOR_CLI_DAY_ROLLUPS_H
#define BLUR_COLLECTOR_CLI_DAY_ROLLUPS_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "observe/collector_metrics.h"
#include "store/store.h"

namespace blur::collector {

class DayRollUps {
 public:
  // After midnight, a pass waits this long (late commits of the closed day's
  // last seconds finish first; nothing depends on it).
  static constexpr int64_t kDelayAfterMidnightSeconds = 60;
  static constexpr int64_t kRetrySeconds = 60;

  // Starts the thread; `metrics` may be null.
  DayRollUps(Store& store, observe::CollectorMetrics* metrics);
  ~DayRollUps();  // stop()
  DayRollUps(const DayRollUps&) = delete;
  DayRollUps& operator=(const DayRollUps&) = delete;

  // Ends a pass in progress after its current day, then the thread.
  void stop();

 private:
  void run();
  // One pass; false if it failed.
  bool pass();

  Store& store_;
  observe::CollectorMetrics* metrics_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<bool> cancel_{false};  // ends a pass between two days
  std::thread thread_;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_CLI_DAY_ROLLUPS_H
