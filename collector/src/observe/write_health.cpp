#include "observe/write_health.h"

namespace blur::collector::observe {

void WriteHealth::record_commit(const Fallible& commit, Clock::time_point now) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    last_commit_ = now;
  }
  record(commit);
}

void WriteHealth::record_probe(const Fallible& probe) { record(probe); }

void WriteHealth::record(const Fallible& write) {
  std::string line;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!write) {
      ++failures_;
      if (!failing_) {
        failing_ = true;
        line = "blur-collector: writes to the database are failing (batches are answered 503 "
               "and /readyz is not ready until one succeeds): " + write.error().message;
      }
    } else if (failing_) {
      line = "blur-collector: the database takes writes again, after " +
             std::to_string(failures_) + " failed write" + (failures_ == 1 ? "" : "s");
      failing_ = false;
      failures_ = 0;
    }
  }
  if (!line.empty() && log_) log_(line);
}

bool WriteHealth::failing() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failing_;
}

bool WriteHealth::probe_due(Clock::time_point now) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failing_ && now - last_commit_ >= kProbeAfterIdle;
}

}  // namespace blur::collector::observe
