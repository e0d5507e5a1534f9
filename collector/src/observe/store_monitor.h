// Watches the store for the operator, off the I/O threads: answers
// readiness checks (a trivial query that must finish within a timeout) and
// samples the store's size into a gauge. While commits fail (WriteHealth),
// not ready (a full disk still answers reads) until a commit succeeds or,
// once no commit has been tried for a while, a probe write does.
//
// A store that hangs (a PostgreSQL server that stopped answering) must not
// hang readiness: the query runs on the monitor's thread, and a second
// thread answers every check still waiting at its deadline with "did not
// answer within ...". Checks that arrive while a query runs are answered
// by the next query; at most one runs at a time.
//
// stop() waits for a query in progress: a store that never answers delays
// shutdown as it would delay the group committer's.
#ifndef BLUR_COLLECTOR_OBSERVE_STORE_MONITOR_H
#define BLUR_COLLECTOR_OBSERVE_STORE_MONITOR_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "observe/gauge.h"
#include "observe/write_health.h"
#include "store/store.h"

namespace blur::collector::observe {

class StoreMonitor {
 public:
  struct Options {
    std::chrono::milliseconds ready_timeout{2000};
    std::chrono::milliseconds size_period{15000};  // the first sample at start
  };
  // `size` may be null (no sampling); `writes` too (readiness is a read);
  // `new_devices`, if given, is sampled with the size: the devices that
  // first enrolled in the last 24 hours.
  StoreMonitor(Store& store, Gauge* size, Options options, WriteHealth* writes = nullptr,
               Gauge* new_devices = nullptr);
  ~StoreMonitor();  // stop()
  StoreMonitor(const StoreMonitor&) = delete;
  StoreMonitor& operator=(const StoreMonitor&) = delete;

  // Calls `done` once, from one of the monitor's threads: done() if the
  // store answered in time, else the error (kUnavailable) saying why.
  void check_ready(std::function<void(const Fallible&)> done);

  // Ends the threads and answers the checks still waiting ("stopping").
  // Call it before destroying the HTTP server whose Replies the checks hold.
  void stop();

 private:
  using Clock = std::chrono::steady_clock;
  struct Check {
    std::function<void(const Fallible&)> done;
    Clock::time_point deadline;
    uint64_t query = 0;  // the query that answers it; 0: not started yet
  };
  void run_queries();
  void answer_late_checks();
  // Removes the checks `pick` selects and answers them with `result`
  // (outside the lock).
  template <class Pick>
  void answer(std::unique_lock<std::mutex>& lock, Pick pick, const Fallible& result);

  // The check's query: a read, or a write probe while writes fail.
  Fallible query_store();

  Store& store_;
  Gauge* const size_;
  WriteHealth* const writes_;
  Gauge* const new_devices_;
  const Options options_;
  std::mutex mutex_;
  std::condition_variable wake_queries_;
  std::condition_variable wake_deadlines_;
  std::vector<std::shared_ptr<Check>> checks_;
  uint64_t queries_ = 0;  // queries started
  bool stopping_ = false;
  std::thread query_thread_;
  std::thread deadline_thread_;
};

}  // namespace blur::collector::observe

#endif  // BLUR_COLLECTOR_OBSERVE_STORE_MONITOR_H
