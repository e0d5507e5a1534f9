// Every metric the collector exports, registered in one place (names, help,
// labels; docs/collector.md lists them). The members are updated directly
// where things happen: the ingest API, the group committer's hook, the
// request observer, the store monitor.
#ifndef BLUR_COLLECTOR_OBSERVE_COLLECTOR_METRICS_H
#define BLUR_COLLECTOR_OBSERVE_COLLECTOR_METRICS_H

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

#include "observe/prometheus_registry.h"
#include "observe/refusals.h"
#include "observe/request_durations.h"

namespace blur::collector::observe {

class CollectorMetrics {
 public:
  explicit CollectorMetrics(Registry& registry);
  CollectorMetrics(const CollectorMetrics&) = delete;
  CollectorMetrics& operator=(const CollectorMetrics&) = delete;

  // After each commit of the group committer (its writer thread).
  void record_commit(std::chrono::nanoseconds duration, size_t reports, bool committed);

  // How long before a report its device first enrolled: a fake fleet is
  // young (docs/SECURITY.md, "A fleet of fake devices").
  enum class DeviceAge { kEnrolledLastDay, kEnrolledEarlier, kNotEnrolled };
  static DeviceAge device_age(std::optional<int64_t> enrolled_at, int64_t now);
  // Valid reports received for `metric_id` from devices of `age` (before
  // the contribution bound and the commit): reports_received_total.
  void count_received(uint32_t metric_id, DeviceAge age, uint64_t reports);

  // A batch of which the reports of `metric_id` were refused (all of them,
  // or some: contribution_bound, quarantine) for `reason`:
  // blur_collector_batches_refused_total{metric, reason}. Only for
  // registered metrics (the caller checks), so the series are at most the
  // metrics times the reasons. Registered on first use.
  void count_refused_batch(uint32_t metric_id, Reason reason);
  // Those counts: per metric, per reason, the nonzero ones.
  std::map<uint32_t, std::map<Reason, uint64_t>> refused_batches() const;

  Registry& registry;
  Counter& reports_accepted;     // newly stored, acknowledged
  Counter& reports_duplicate;    // already stored, identical (resent)
  Counter& reports_implausible_time;  // an implausible observation time: bucketed at arrival
  Counter& batches_conflicting;  // refused with 409
  Counter& auth_failures;        // 401s and 403s
  Counter& commits_failed;
  Counter& enrollments_new;      // a device enrolled for the first time
  Counter& enrollments_renewed;  // a known device's new token
  Counter& reports_quarantined;  // refused: their device enrolled too recently
  Counter& rollup_days;          // (metric, UTC day)s this collector rolled up
  Counter& rollup_failures;      // roll-up passes that failed (retried)
  Histogram& commit_seconds;
  Histogram& commit_reports;
  Gauge& store_size_bytes;
  Gauge& devices_enrolled_last_day;
  Refusals refusals;
  RequestDurations requests;

 private:
  std::mutex received_mutex_;
  std::map<std::pair<uint32_t, DeviceAge>, Counter*> received_;  // registered on first use
  mutable std::mutex refused_mutex_;
  std::map<std::pair<uint32_t, Reason>, Counter*> refused_;  // registered on first use
};

}  // namespace blur::collector::observe

#endif  // BLUR_COLLECTOR_OBSERVE_COLLECTOR_METRICS_H
