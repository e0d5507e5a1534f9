// The collector's store, over any backend (store/backend.h): metrics with
// their whole configuration, raw reports keyed by (device nonce, report id)
// and kept for each metric's retention, and per (metric, time bucket,
// collector node) the mechanism's sufficient statistics, updated in the same
// transaction as the raw reports. An estimate reads aggregates only: O(domain)
// numbers whatever the number of reports, on a reader connection of its own,
// so reads never wait for ingestion.
//
// Thread safety: every method may be called from any thread. Writes are
// serialized on one writer connection (the group committer batches them);
// reads use a pool of reader connections.
#ifndef BLUR_COLLECTOR_STORE_STORE_H
#define BLUR_COLLECTOR_STORE_STORE_H

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "aggregate/aggregate.h"
#include "config/metric_rules.h"
#include "model/incoming_report.h"
#include "store/backend.h"
#include "util/cancellation.h"
#include "util/outcome.h"

namespace blur::collector {

// Bucket starts in [from, to), Unix seconds.
struct TimeRange {
  int64_t from = INT64_MIN;
  int64_t to = INT64_MAX;
};

// A validated batch and when it arrived.
struct ReceivedBatch {
  const Batch* batch = nullptr;
  int64_t received_at = 0;  // Unix seconds
};

struct BatchOutcome {
  size_t inserted = 0;
  size_t duplicates = 0;  // already stored, identical: a resent batch
  // New reports refused by the contribution bound or the receive-time
  // allowance (not stored, not aggregated), and the bounds that refused
  // them ("metric 7 accepts at most 4 reports per device per 3600-second
  // bucket", "; " between them).
  size_t over_limit = 0;
  std::string limit_message;
  std::vector<uint32_t> over_limit_metrics;  // the metrics of those reports, each once
  // New reports (stored or refused) whose observation time was implausible
  // (see report_time): bucketed by their receive time instead.
  size_t implausible_time = 0;
  // Reports of retired metrics (Store::retire_metric): not stored, and what
  // refused them ("metric 7 was retired at 2026-11-26T09:00:00Z and accepts
  // no new reports", "; " between metrics).
  size_t retired = 0;
  std::string retired_message;
  std::vector<uint32_t> retired_metrics;  // the metrics of those reports, each once
  // A report reuses a stored (device nonce, report id) with another metric,
  // epsilon, payload or observation time: nothing of the batch is stored.
  bool conflict = false;
  uint64_t conflict_report_id = 0;
  std::string conflict_message;
};

// One period's aggregate (all nodes merged) and how many of the metric's
// buckets with reports it spans.
struct PeriodAggregate {
  int64_t start = 0;
  Aggregate aggregate;
  uint64_t buckets = 0;
};

// Whether the metric's closed days are rolled up into day rows
// (store/backend.h: AggregateTable::kDay): buckets shorter than a day and a
// dense tally or numeric summary. Word discovery's sparse tallies keep
// bucket rows only: their rows are capped and rotated (kAggregateRowBytes),
// and a day row would be rewritten whole by every late report.
bool rolls_up(const MetricConfig& metric);

// What one roll-up pass did.
struct RollUpResult {
  uint64_t days = 0;         // (metric, day)s rolled up
  uint64_t day_rows = 0;     // day rows written (one per node with bucket rows that day)
  uint64_t bucket_rows = 0;  // bucket rows folded into them
};

// Which time a report is bucketed by: the device's observation time when it
// is plausible (not after received_at + kClockSkewSeconds, not more than
// max_report_age_seconds before received_at, not older than the retention),
// else the receive time. The age window keeps a device's clock from
// choosing among every bucket of the retention: a report can claim only
// the buckets of the last few days, and older claims land in the current
// bucket, under its bound.
inline constexpr int64_t kClockSkewSeconds = 300;
inline constexpr int64_t kDefaultMaxReportAgeSeconds = 3 * 86400;
struct ReportTime {
  int64_t bucket_start;
  store::TimeSource source;
};
ReportTime report_time(const MetricConfig& metric, uint32_t device_minute, int64_t received_at,
                       int64_t max_report_age_seconds = kDefaultMaxReportAgeSeconds);

// How long after its first arrival a resent report is still recognised as a
// duplicate where raw reports are partitioned by day (PostgreSQL); SQLite
// recognises one as long as the original is kept (its retention).
inline constexpr int64_t kDefaultDuplicateWindowSeconds = 7 * 86400;

// How a read-write store admits reports.
struct StoreOptions {
  // report_time()'s window: `serve --max-report-age`.
  int64_t max_report_age_seconds = kDefaultMaxReportAgeSeconds;
  // `serve --duplicate-window`.
  int64_t duplicate_window_seconds = kDefaultDuplicateWindowSeconds;
};

class Store {
 public:
  enum class Mode { kReadWrite, kReadOnly };
  // url: PATH, sqlite:PATH or postgresql://... (store/backend.h).
  static Outcome<std::unique_ptr<Store>> open(const std::string& url, Mode mode,
                                              StoreOptions options = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  std::string describe() const;

  // Registers a metric, or confirms an identical registration. A changed
  // configuration for an existing id is refused (kConflict naming the first
  // field that differs): stored reports would no longer match it.
  Fallible register_metric(const MetricConfig& metric);
  std::optional<MetricConfig> metric(uint32_t id) const;
  std::vector<MetricConfig> metrics() const;
  // Reads the metric definitions and retirements again: other collectors of the database
  // may have registered metrics since (api/live_reload.h). Returns the ids
  // new to this process; on an error the definitions held stay.
  Outcome<std::vector<uint32_t>> reload_metrics();
  // Retires a registered metric at `now`: from then on its reports are
  // refused (BatchOutcome::retired) by this store at once and by every
  // other store on the database from its next reload_metrics(); its
  // aggregates and raw reports stay (estimates still read them; retention
  // still prunes them). Returns the retirement time, the first one's if it
  // was retired before. kNotFound for an unknown metric.
  Outcome<int64_t> retire_metric(uint32_t id, int64_t now);
  // When the metric was retired, if it was (as of the last load).
  std::optional<int64_t> retired_at(uint32_t id) const;

  // Stores validated batches in one durable transaction: result[i] for
  // batches[i]. No two batches may share a device nonce (the group
  // committer ensures it). An error stores nothing. Per device nonce,
  // metric and time bucket at most reports_per_bucket_limit() reports are
  // stored, and per device nonce, metric and UTC day of arrival at most
  // reports_per_day_limit(), counting those stored before and earlier rows
  // of this group (in batch order); the excess is refused and counted in
  // over_limit.
  //
  // With defer_sync, when commit_sync() is not null, the transaction is
  // committed lazily: readers see it at once, but it is durable only once
  // commit_sync()->sync() returns after this; the caller answers no one
  // before that (a pipelined group commit).
  Outcome<std::vector<BatchOutcome>> insert(const std::vector<ReceivedBatch>& batches,
                                            bool defer_sync = false);
  // What makes insert(..., true)'s commits durable; nullptr when the
  // backend cannot sync later (PostgreSQL) or the store is read-only: then
  // every insert() is durable when it returns.
  std::shared_ptr<store::CommitSync> commit_sync() const { return commit_sync_; }

  // The metric's aggregates per period of `period_seconds` (a multiple or
  // a divisor of the bucket width that divides a day; all nodes merged),
  // ordered, periods without reports absent; and all of them merged into
  // one. Whole rolled-up days are read from their day rows (one per node),
  // the rest of the range from bucket rows. `cancel`, if given, is checked
  // per stored row: once requested, kUnavailable.
  // PeriodAggregate::buckets is counted only if `count_buckets` (an extra
  // query for rolled-up days).
  Outcome<std::vector<PeriodAggregate>> period_aggregates(
      const MetricConfig& metric, TimeRange range, int64_t period_seconds, bool count_buckets,
      const Cancellation* cancel = nullptr) const;
  // `buckets`, if given, gets how many buckets the merged aggregate spans.
  Outcome<Aggregate> aggregate(const MetricConfig& metric, TimeRange range,
                               uint64_t* buckets = nullptr,
                               const Cancellation* cancel = nullptr) const;

  // Rolls up every closed UTC day (ending at or before `now`) of the
  // metrics that roll up (rolls_up) that has bucket rows and no day rows:
  // per (metric, day), in one transaction, each node's bucket rows of the
  // day are folded into that node's day row. Bucket rows stay (the range
  // edges and hourly series read them). A crash loses one day's
  // uncommitted roll-up, which the next pass redoes. Safe with collectors
  // writing (a write into the day waits for its roll-up, then updates both
  // rows) and with other collectors rolling up (each day once).
  // `cancel`, if given, is checked between days: once requested, the pass
  // ends with what it did (the rest waits for the next pass).
  // `after_day_rows` is fault injection for tests: called inside each day's
  // transaction once its day rows are written, before the commit.
  Outcome<RollUpResult> roll_up(
      int64_t now, const Cancellation* cancel = nullptr,
      const std::function<void(const store::MetricDay&)>& after_day_rows = nullptr);

  // Deletes raw reports older than the metric's retention at `now`
  // (aggregates stay); returns how many. Where raw reports are partitioned
  // by day (PostgreSQL), the retention ends at the UTC midnight before, so
  // that whole days go (drop_expired_partitions) and no rows are deleted
  // one by one unless metrics' retentions differ.
  Outcome<uint64_t> prune(const MetricConfig& metric, int64_t now);
  // Drops the daily partitions of raw reports that every metric's retention
  // at `now` has passed; returns their day starts (none on SQLite).
  Outcome<std::vector<int64_t>> drop_expired_partitions(int64_t now);
  // The day starts of the raw reports' partitions (none on SQLite).
  Outcome<std::vector<int64_t>> report_partition_days() const;
  // Rebuilds the metric's aggregates from its raw reports, one bucket per
  // transaction, while collectors keep writing: each bucket's rebuild takes
  // its bucket lock exclusively (Connection::lock_buckets), so reports
  // committed before are in the rebuilt row and reports committed after
  // are added to it by their writer, none twice. Buckets whose raw reports
  // were pruned lose their aggregates too, so prune first only what you no
  // longer need to estimate. Returns the reports the rebuilt rows hold.
  Outcome<uint64_t> reaggregate(const MetricConfig& metric);
  // The aggregate of the metric's raw reports in the range, computed from
  // raw rows (for checks: it must equal aggregate()).
  Outcome<Aggregate> aggregate_from_raw(const MetricConfig& metric, TimeRange range) const;

  Outcome<uint64_t> report_count(std::optional<uint32_t> metric_id = std::nullopt) const;
  // The contribution bound's counts over the range, per device summed over
  // each period of `period_seconds` (0: the whole range, one entry at most):
  // what an estimate's variance needs when devices send several reports
  // (estimate/device_clustering.h). The counts are pruned with the raw
  // reports, so buckets past the retention have none (their aggregates
  // stay): the estimate then bounds those reports' devices conservatively.
  Outcome<std::vector<PeriodDeviceCounts>> device_counts(const MetricConfig& metric,
                                                         TimeRange range,
                                                         int64_t period_seconds = 0) const;
  // The contribution bound's count for one device, metric and bucket.
  Outcome<uint64_t> device_count(uint32_t metric_id, int64_t bucket_start,
                                 uint64_t device_nonce) const;
  // The receive-time allowance's count for one device, metric and UTC day
  // of arrival (day_start: a midnight, Unix seconds).
  Outcome<uint64_t> receive_day_count(uint32_t metric_id, int64_t day_start,
                                      uint64_t device_nonce) const;

  // Devices: enrollment's bindings of a nonce to the SHA-256 of its device
  // key (store/backend.h: DeviceRow), shared by every collector of the
  // database. The nonce's binding, if it enrolled with a key.
  Outcome<std::optional<store::DeviceRow>> device(uint64_t device_nonce) const;
  // Whether any report of the nonce is stored (its reports may have been
  // pruned: then false).
  Outcome<bool> has_reports(uint64_t device_nonce) const;
  // Binds the nonce to `key_sha256` at `now` unless it is bound already,
  // and returns the binding stored afterwards: this one, or the earlier one
  // (the caller compares keys). Written lazily (Connection::begin_lazy): a
  // binding a crash loses is made again at the device's next enrollment.
  Outcome<store::DeviceRow> bind_device(uint64_t device_nonce,
                                        const std::array<uint8_t, 32>& key_sha256, int64_t now);
  // Sets a bound nonce's last_renewed_at (lazily, like bind_device).
  Fallible record_renewal(uint64_t device_nonce, int64_t now);
  // For a quarantine of new devices: when the nonce first enrolled with a
  // key (nullopt: never, e.g. a certificate device or one not seen since
  // schema 3).
  Outcome<std::optional<int64_t>> enrolled_at(uint64_t device_nonce) const;
  // For /metrics: devices first enrolled at or after `since` (Unix s).
  Outcome<uint64_t> devices_enrolled_since(int64_t since) const;

  // An aggregate row is read, added to and rewritten by every commit that
  // touches its bucket, so its size is each commit's cost. Once this node
  // writes a row larger than this, the node continues under a fresh writer
  // id (a new nodes row) after the commit, so its later reports start new,
  // small rows; reads sum all rows anyway. Only sparse tallies grow this
  // large (word discovery: a few bytes per distinct cell).
  static constexpr size_t kAggregateRowBytes = size_t{64} << 10;

  // For readiness: a trivial query on a reader connection.
  Fallible ping() const;
  // For readiness while commits fail: a write transaction that changes
  // nothing, committed on the writer connection (it waits for a commit in
  // progress).
  Fallible probe_write();
  // The database's size on disk in bytes (SQLite: the file and its WAL;
  // PostgreSQL: pg_total_relation_size of the collector's tables in its
  // schema, indexes and TOAST included, not the whole database).
  Outcome<uint64_t> size_bytes() const;

 private:
  // Reads the metrics and their retirements from the database (at open and by
  // reload_metrics).
  Fallible load_metrics();
  Store(std::unique_ptr<store::Database> database, StoreOptions options);
  Outcome<int64_t> node_id();  // registered on first write
  bool rotate_node_after_commit_ = false;
  int node_segments_ = 0;  // writer ids this process has registered
  Fallible add_to_own_aggregates(const std::map<std::pair<uint32_t, int64_t>, Aggregate>& deltas);
  // Adds deltas[i] to this node's row of `table` at keys[i] (metric, start).
  Fallible add_to_own_rows(store::AggregateTable table,
                           const std::vector<std::pair<uint32_t, int64_t>>& keys,
                           const std::vector<const Aggregate*>& deltas);
  Outcome<bool> roll_up_day(const MetricConfig& metric, int64_t day_start,
                            const std::function<void(const store::MetricDay&)>& after_day_rows,
                            RollUpResult* result);
  // The contribution bound, then the receive-time allowance, over the rows
  // about to be stored (*stored[i]): counts them, un-stores and deletes the
  // excess; over[i] names the bound that refused row i.
  Fallible bound_contributions(const std::vector<store::ReportRow>& rows,
                               const std::vector<const MetricConfig*>& row_metric,
                               std::vector<bool>* stored,
                               std::vector<std::optional<store::CountTable>>* over);

  // One transaction on the writer connection (begin_lazy() if `lazy`):
  // `write`, then commit; rolled back if either fails.
  Fallible write_transaction(bool lazy, const std::function<Fallible(store::Connection&)>& write);

  // A reader connection, returned to the pool when it goes out of scope.
  class Reader;
  Outcome<Reader> reader() const;
  // read_with(connection) on a pooled reader; a connection whose read failed
  // is not returned to the pool (it may be broken).
  template <typename Read>
  auto read(Read read_with) const -> decltype(read_with(std::declval<store::Connection&>()));
  // The rows an estimate over the range reads: day rows for its whole
  // rolled-up days (when `by_day` and the metric rolls up), bucket rows
  // for the rest.
  Outcome<std::vector<store::AggregateRow>> load_aggregate_rows(const MetricConfig& metric,
                                                                TimeRange range, bool by_day) const;
  // How many buckets with rows the range has, per period (0: one period).
  Outcome<std::map<int64_t, uint64_t>> bucket_counts(const MetricConfig& metric, TimeRange range,
                                                     int64_t period_seconds) const;

  // The metric's retention cutoff at `now` (see prune()).
  int64_t retention_cutoff(const MetricConfig& metric, int64_t now) const;

  std::unique_ptr<store::Database> database_;
  const StoreOptions options_;
  bool partitions_reports_ = false;  // the backend keeps raw reports in daily partitions

  mutable std::shared_mutex metrics_mutex_;
  std::map<uint32_t, MetricConfig> metrics_;
  std::map<uint32_t, int64_t> retired_;  // metric id -> retired at

  std::mutex writer_mutex_;  // the writer connection and the node id
  std::unique_ptr<store::Connection> writer_;
  std::shared_ptr<store::CommitSync> commit_sync_;  // the writer's, if any
  std::optional<int64_t> node_id_;

  mutable std::mutex readers_mutex_;
  mutable std::vector<std::unique_ptr<store::Connection>> idle_readers_;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_STORE_STORE_H
