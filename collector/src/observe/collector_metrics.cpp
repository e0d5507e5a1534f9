#include "observe/collector_metrics.h"

#include "observe/process_metrics.h"

namespace blur::collector::observe {

namespace {
// Reports per commit: the group committer takes up to 32768.
std::vector<double> commit_size_buckets() { return {1, 4, 16, 64, 256, 1024, 4096, 16384, 32768}; }
}  // namespace

CollectorMetrics::CollectorMetrics(Registry& r)
    : registry(r),
      reports_accepted(r.counter("blur_collector_reports_accepted_total",
                                 "Reports newly stored (acknowledged after their commit)")),
      reports_duplicate(r.counter("blur_collector_reports_duplicate_total",
                                  "Reports received again, identical to a stored one (not "
                                  "stored twice)")),
      reports_implausible_time(r.counter(
          "blur_collector_reports_implausible_time_total",
          "New reports whose observation time was implausible (more than --max-report-age "
          "before arrival, in the future, or past the retention): bucketed by their receive "
          "time instead")),
      batches_conflicting(r.counter("blur_collector_batches_conflicting_total",
                                    "Batches refused with 409: a report id reused with other "
                                    "content")),
      auth_failures(r.counter("blur_collector_auth_failures_total",
                              "Requests whose credentials were missing or wrong")),
      commits_failed(r.counter("blur_collector_commits_failed_total",
                               "Group commits that failed (their batches answered 503)")),
      enrollments_new(r.counter("blur_collector_enrollments_total",
                                "Enrollments answered with a token, by kind",
                                {{"kind", "new_device"}})),
      enrollments_renewed(r.counter("blur_collector_enrollments_total",
                                    "Enrollments answered with a token, by kind",
                                    {{"kind", "renewal"}})),
      reports_quarantined(r.counter("blur_collector_reports_quarantined_total",
                                    "Reports refused because their device enrolled less than "
                                    "the metric's quarantine before")),
      rollup_days(r.counter("blur_collector_rollup_days_total",
                            "Metric days this collector rolled up into day rows (each closed "
                            "UTC day of each metric once, by one collector)")),
      rollup_failures(r.counter("blur_collector_rollup_failures_total",
                                "Day roll-up passes that failed (retried a minute later)")),
      commit_seconds(r.histogram("blur_collector_commit_duration_seconds",
                                 "Duration of one group commit (one durable transaction)",
                                 latency_buckets_seconds())),
      commit_reports(r.histogram("blur_collector_commit_reports",
                                 "Reports per group commit (duplicates included)",
                                 commit_size_buckets())),
      store_size_bytes(r.gauge("blur_collector_store_size_bytes",
                               "Bytes the database takes (SQLite: file and WAL; PostgreSQL: "
                               "the collector's tables in its schema, indexes and TOAST "
                               "included), sampled periodically")),
      devices_enrolled_last_day(r.gauge("blur_collector_devices_enrolled_last_day",
                                        "Devices whose first enrollment was in the last 24 hours, "
                                        "sampled with the store size")),
      refusals(r),
      requests(r) {
  register_process_metrics(r);
}

CollectorMetrics::DeviceAge CollectorMetrics::device_age(std::optional<int64_t> enrolled_at,
                                                         int64_t now) {
  if (!enrolled_at) return DeviceAge::kNotEnrolled;
  return now - *enrolled_at < 86400 ? DeviceAge::kEnrolledLastDay : DeviceAge::kEnrolledEarlier;
}

void CollectorMetrics::count_received(uint32_t metric_id, DeviceAge age, uint64_t reports) {
  Counter* counter = nullptr;
  {
    std::lock_guard<std::mutex> lock(received_mutex_);
    Counter*& slot = received_[{metric_id, age}];
    if (slot == nullptr) {
      static constexpr const char* kAges[] = {"enrolled_last_day", "enrolled_earlier",
                                              "not_enrolled"};
      slot = &registry.counter(
          "blur_collector_reports_received_total",
          "Valid reports received, by metric and by how long before their device first enrolled "
          "(not_enrolled: a certificate device, or authentication off)",
          {{"metric", std::to_string(metric_id)}, {"device_age", kAges[static_cast<int>(age)]}});
    }
    counter = slot;
  }
  counter->add(reports);
}

void CollectorMetrics::count_refused_batch(uint32_t metric_id, Reason reason) {
  Counter* counter = nullptr;
  {
    std::lock_guard<std::mutex> lock(refused_mutex_);
    Counter*& slot = refused_[{metric_id, reason}];
    if (slot == nullptr) {
      slot = &registry.counter(
          "blur_collector_batches_refused_total",
          "Batches of which a registered metric's reports were refused, all or some, by metric "
          "and reason (a batch refused whole counts under each metric it carried)",
          {{"metric", std::to_string(metric_id)}, {"reason", reason_name(reason)}});
    }
    counter = slot;
  }
  counter->add();
}

std::map<uint32_t, std::map<Reason, uint64_t>> CollectorMetrics::refused_batches() const {
  std::lock_guard<std::mutex> lock(refused_mutex_);
  std::map<uint32_t, std::map<Reason, uint64_t>> out;
  for (const auto& [key, counter] : refused_) {
    if (const uint64_t value = counter->value(); value != 0) out[key.first][key.second] = value;
  }
  return out;
}

void CollectorMetrics::record_commit(std::chrono::nanoseconds duration, size_t reports,
                                     bool committed) {
  if (!committed) {
    commits_failed.add();
    return;
  }
  commit_seconds.observe(std::chrono::duration<double>(duration).count());
  commit_reports.observe(static_cast<double>(reports));
}

}  // namespace blur::collector::observe
