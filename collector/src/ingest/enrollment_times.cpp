#include "ingest/enrollment_times.h"

namespace blur::collector {

Outcome<std::optional<int64_t>> EnrollmentTimes::of(uint64_t device_nonce) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = known_.find(device_nonce);
    if (found != known_.end()) return std::optional<int64_t>(found->second);
  }
  auto enrolled = store_.enrolled_at(device_nonce);
  if (!enrolled) return enrolled.error();
  if (enrolled.value()) remember(device_nonce, *enrolled.value());
  return enrolled;
}

void EnrollmentTimes::remember(uint64_t device_nonce, int64_t enrolled_at) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (known_.size() >= max_entries_) known_.clear();
  known_.emplace(device_nonce, enrolled_at);
}

}  // namespace blur::collector
