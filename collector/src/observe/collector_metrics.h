// Every metric the collector exports, registered in one place (names, help,
// labels; docs/collector.md lists them). The members are updated directly
// where things happen: the ingest API, the group committer's hook, the
// request observer, the store monitor.
#ifndef BLUR_COLLECTOR_OBSERVE_COLLECTOR_METRICS_H
#define BLUR_COLLECTOR_OBSERVE_COLLECTOR_METRICS_H

#include <chrono>
#include <cstddef>

#include "observe/refusals.h"
#include "observe/registry.h"
#include "observe/request_durations.h"

namespace blur::collector::observe {

class CollectorMetrics {
 public:
  explicit CollectorMetrics(Registry& registry);
  CollectorMetrics(const CollectorMetrics&) = delete;
  CollectorMetrics& operator=(const CollectorMetrics&) = delete;

  // After each commit of the group committer (its writer thread).
  void record_commit(std::chrono::nanoseconds duration, size_t reports, bool committed);

  Registry& registry;
  Counter& reports_accepted;     // newly stored, acknowledged
  Counter& reports_duplicate;    // already stored, identical (resent)
  Counter& reports_implausible_time;  // an implausible observation time: bucketed at arrival
  Counter& batches_conflicting;  // refused with 409
  Counter& auth_failures;        // 401s and 403s
  Counter& commits_failed;
  Histogram& commit_seconds;
  Histogram& commit_reports;
  Gauge& store_size_bytes;
  Refusals refusals;
  RequestDurations requests;
};

}  // namespace blur::collector::observe

#endif  // BLUR_COLLECTOR_OBSERVE_COLLECTOR_METRICS_H
