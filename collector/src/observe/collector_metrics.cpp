#include "observe/collector_metrics.h"

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
      commit_seconds(r.histogram("blur_collector_commit_duration_seconds",
                                 "Duration of one group commit (one durable transaction)",
                                 latency_buckets_seconds())),
      commit_reports(r.histogram("blur_collector_commit_reports",
                                 "Reports per group commit (duplicates included)",
                                 commit_size_buckets())),
      store_size_bytes(r.gauge("blur_collector_store_size_bytes",
                               "Bytes the database takes (SQLite: file and WAL; PostgreSQL: "
                               "pg_database_size), sampled periodically")),
      refusals(r),
      requests(r) {}

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
