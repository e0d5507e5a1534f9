// When each device first enrolled (Store::enrolled_at, the devices table),
// for what ingestion does with a device's age: the quarantine of new
// devices (MetricConfig::quarantine_seconds) and the reports-by-device-age
// counters an operator watches for fake fleets.
//
// Cached in memory: a binding is never changed once made, so a cached time
// never goes stale. A nonce without one (a certificate device, a device not
// enrolled since device keys) is looked up again each time: it may enroll.
// Bounded: past max_entries the cache starts over (misses then cost one
// indexed read each, on a reader connection). Enrollment remembers the
// times it binds or reads (remember()): a device's first batch after its
// enrollment at this collector then costs no read at all.
#ifndef BLUR_COLLECTOR_INGEST_ENROLLMENT_TIMES_H
#define BLUR_COLLECTOR_INGEST_ENROLLMENT_TIMES_H

#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "store/store.h"

namespace blur::collector {

class EnrollmentTimes {
 public:
  explicit EnrollmentTimes(const Store& store, size_t max_entries = size_t{1} << 20)
      : store_(store), max_entries_(max_entries) {}

  // Unix seconds of the nonce's first enrollment; nullopt if it has none.
  Outcome<std::optional<int64_t>> of(uint64_t device_nonce);
  // The nonce's first enrollment, as the devices table holds it.
  void remember(uint64_t device_nonce, int64_t enrolled_at);

 private:
  const Store& store_;
  const size_t max_entries_;
  std::mutex mutex_;
  std::unordered_map<uint64_t, int64_t> known_;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_INGEST_ENROLLMENT_TIMES_H
