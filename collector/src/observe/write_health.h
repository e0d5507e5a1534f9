// Whether the store takes writes, learnt from the commits themselves. The
// operator's log gets one line when commits start failing (with the
// database's reason, which devices never see) and one when a write succeeds
// again, never one per request; /readyz reports not ready in between.
//
// While batches keep arriving, their commits decide. A full disk may still
// take a small write (SQLite reuses its log file's space; PostgreSQL its
// WAL segments) while every real commit fails, so a probe write is trusted
// only once no commit has been tried for kProbeAfterIdle: then it is the
// only way to notice the recovery, since a load balancer sends no batch to
// a collector that is not ready (observe/store_monitor.h runs the probe).
#ifndef BLUR_COLLECTOR_OBSERVE_WRITE_HEALTH_H
#define BLUR_COLLECTOR_OBSERVE_WRITE_HEALTH_H

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "util/outcome.h"

namespace blur::collector::observe {

class WriteHealth {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kProbeAfterIdle{10};
  // Receives each state change as one line, without a newline.
  using Log = std::function<void(const std::string& line)>;
  explicit WriteHealth(Log log) : log_(std::move(log)) {}

  // After each group commit: done() or why it failed.
  void record_commit(const Fallible& commit, Clock::time_point now = Clock::now());
  // After a probe write (only when probe_due()).
  void record_probe(const Fallible& probe);
  // Since the last failed write, none succeeded.
  bool failing() const;
  // Failing, and no commit tried for kProbeAfterIdle.
  bool probe_due(Clock::time_point now = Clock::now()) const;

 private:
  void record(const Fallible& write);

  const Log log_;
  mutable std::mutex mutex_;
  bool failing_ = false;
  uint64_t failures_ = 0;  // since the state changed to failing
  Clock::time_point last_commit_{};
};

}  // namespace blur::collector::observe

#endif  // BLUR_COLLECTOR_OBSERVE_WRITE_HEALTH_H
