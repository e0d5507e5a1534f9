// What a database must offer the collector's store: a session (Connection)
// with a handful of primitive operations in SQL terms. The storage logic
// (dedupe, conflicts, aggregates, time buckets) lives once, in store.cpp,
// over this interface; store/sqlite/ and store/postgres/ implement it, and
// no backend-specific code lives anywhere else.
//
// Every call returns an Outcome; after an error inside a transaction the
// caller rolls back. A Connection is used by one thread at a time.
#ifndef BLUR_COLLECTOR_STORE_BACKEND_H
#define BLUR_COLLECTOR_STORE_BACKEND_H

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "store/device_counts.h"
#include "util/outcome.h"
#include "util/time_text.h"

namespace blur::collector::store {

// The schema this collector writes. A database at a newer version is
// refused (a newer collector wrote it); an empty one is created; older
// versions are upgraded in place, one step after the other (2 adds
// report_counts, filled from the reports; 3 adds devices, empty: each
// device binds its key at its next enrollment, and receive_counts, filled
// from the stored reports). Older collectors then refuse the database:
// version 1 would store reports without counting them against the
// contribution bound, version 2 would enroll any nonce and ignore the
// receive-time allowance. 4 adds retired_metrics, empty; day_aggregates,
// empty: the roll-up fills it (version 3 would add late reports to hourly
// rows only, and estimates reading day rows would miss them); and on
// PostgreSQL moves the raw reports into daily partitions. 5 keys the two
// count tables (and SQLite's index of reports by bucket) period first and
// device before metric, rebuilt in place: the same rows, a different order
// (a version-4 collector would still work, but refuses the newer number).
inline constexpr int kSchemaVersion = 5;

// The start of the first day (a midnight) that overlaps [from, ...): any
// start after from - 1 day, saturated at the bottom.
inline constexpr int64_t first_day_overlapping(int64_t from) {
  return from < INT64_MIN + kSecondsPerDay ? INT64_MIN : from - kSecondsPerDay + 1;
}

// Where a report's time bucket came from.
enum class TimeSource : uint8_t { kReceived = 0, kDevice = 1 };

// One stored report: its key, what identifies its content, and its time.
struct ReportRow {
  uint64_t device_nonce = 0;
  uint64_t report_id = 0;
  uint32_t metric_id = 0;
  uint32_t epsilon_micros = 0;
  uint32_t device_minute = 0;  // the device's observed_minute as sent; 0: absent
  int64_t bucket_start = 0;    // Unix seconds, a multiple of the metric's bucket width
  int64_t received_at = 0;     // Unix seconds
  TimeSource time_source = TimeSource::kReceived;
  uint32_t sdk_version = 0;
  std::string payload;  // flatten_payload(): the one canonical form of the randomized output
};

struct ReportKey {
  uint64_t device_nonce = 0;
  uint64_t report_id = 0;
};

// One node's share of a metric's sufficient statistics for one bucket.
struct AggregateRow {
  uint32_t metric_id = 0;
  int64_t bucket_start = 0;
  int64_t node_id = 0;
  uint64_t reports = 0;
  std::string stats;  // Aggregate::serialize()
};

// Which rows of aggregates: one per (metric, time bucket, node), or one per
// (metric, UTC day, node) folding a node's bucket rows of a closed day
// (schema 4). A day is rolled up once it has day rows; from then on every
// write into one of its buckets also adds to the writer's day row, in the
// same transaction, so a node's day row is always the sum of its bucket
// rows of that day.
enum class AggregateTable : uint8_t { kBucket, kDay };

// A metric's UTC day (day_start: a midnight, Unix seconds).
struct MetricDay {
  uint32_t metric_id = 0;
  int64_t day_start = 0;
  bool operator<(const MetricDay& o) const {
    return metric_id != o.metric_id ? metric_id < o.metric_id : day_start < o.day_start;
  }
  bool operator==(const MetricDay& o) const {
    return metric_id == o.metric_id && day_start == o.day_start;
  }
};

// The contribution bound's counts of each device's stored reports, per
// metric and period: two tables, the same operations. Kept in the same
// transaction as the reports, pruned with them.
enum class CountTable : uint8_t {
  kBucket,      // report_counts: per time bucket (the bucket a report is aggregated in)
  kReceiveDay,  // receive_counts: per UTC day of arrival (schema 3), whatever the bucket
};

// A change to the count of one (metric, period, device nonce); the period
// starts at a bucket_start (kBucket) or a UTC midnight (kReceiveDay).
struct DeviceCountChange {
  uint32_t metric_id = 0;
  int64_t period_start = 0;
  uint64_t device_nonce = 0;
  int64_t delta = 0;
};

// An enrolled device (schema 3): the nonce bound to the SHA-256 of the
// device key it first enrolled with (blur/enrollment.h), so that no one
// else holding the app's enrollment secret can enroll it again.
struct DeviceRow {
  uint64_t device_nonce = 0;
  int64_t enrolled_at = 0;  // Unix s of the first enrollment
  std::array<uint8_t, 32> key_sha256{};
  int64_t last_renewed_at = 0;  // Unix s; enrolled_at until a renewal is recorded
};

// Makes the write transactions committed lazily so far durable, as one
// step for many (a pipelined group commit: the writer goes on with the next
// transaction while this waits for the disk). Safe to call from any thread.
class CommitSync {
 public:
  virtual ~CommitSync() = default;
  // Every transaction whose commit() returned before this call began is on
  // disk when it returns done.
  virtual Fallible sync() = 0;
};

class Connection {
 public:
  virtual ~Connection() = default;

  // Creates the tables at kSchemaVersion in an empty database; checks the
  // version of an existing one (kInvalid naming both versions if newer).
  virtual Fallible ensure_schema() = 0;

  virtual Fallible begin() = 0;  // a write transaction
  // A write transaction whose commit may return before it reaches the
  // disk (SQLite: synchronous=NORMAL in WAL mode, the log is synced with the
  // next ordinary commit or checkpoint; PostgreSQL: synchronous_commit off,
  // flushed within wal_writer_delay). A crash may lose it, never tear it.
  // Only for writes that are redone when lost (device bindings).
  virtual Fallible begin_lazy() = 0;
  virtual Fallible commit() = 0;
  virtual void rollback() = 0;
  // What makes this connection's lazy commits durable later, or nullptr if
  // the backend has no such step (PostgreSQL: its commits wait for their own
  // WAL flush, and a lazy one's flush cannot be asked for).
  virtual std::shared_ptr<CommitSync> commit_sync() { return nullptr; }

  // Metrics: the id and the canonical text of the whole configuration.
  virtual Outcome<std::vector<std::pair<uint32_t, std::string>>> load_metrics() = 0;
  // False (and nothing written) if the id exists already.
  virtual Outcome<bool> insert_metric(uint32_t id, const std::string& config) = 0;

  // A new node id for a collector process that will write aggregates: each
  // writer owns its aggregate rows, so nodes never contend on one row.
  virtual Outcome<int64_t> register_node(const std::string& description) = 0;

  // Inserts each row unless its key exists; result[i]: row i was inserted.
  // A backend whose raw reports are partitioned by day (partitions_reports())
  // looks for the key only among reports with bucket_start >=
  // duplicate_since (its duplicate window) and serializes the writers of a
  // device nonce until the transaction ends; one table (SQLite) finds a key
  // wherever it is.
  virtual Outcome<std::vector<bool>> insert_reports(const std::vector<ReportRow>& rows,
                                                    int64_t duplicate_since = INT64_MIN) = 0;
  // The stored rows for these keys (nullopt where absent), in key order.
  virtual Outcome<std::vector<std::optional<ReportRow>>> find_reports(
      const std::vector<ReportKey>& keys) = 0;
  virtual Fallible delete_reports(const std::vector<ReportKey>& keys) = 0;
  // The metric's raw reports with bucket_start in [from, to); visit returns
  // false to stop.
  virtual Fallible scan_reports(uint32_t metric_id, int64_t from, int64_t to,
                                const std::function<bool(const ReportRow&)>& visit) = 0;
  // Deletes the metric's raw reports with bucket_start < before; returns how many.
  virtual Outcome<uint64_t> delete_reports_before(uint32_t metric_id, int64_t before) = 0;
  // All metrics when metric_id is nullopt.
  virtual Outcome<uint64_t> count_reports(std::optional<uint32_t> metric_id) = 0;

  // Adds each change's delta to its key's count in `table` (an absent key
  // counts 0) and returns each count after its change, in order. Keys are
  // distinct and sorted, and a writer changes kBucket before kReceiveDay
  // (concurrent writers then lock them in one order). A count row is
  // locked until the transaction ends, so the returned totals are exact
  // even with several writers.
  virtual Outcome<std::vector<uint64_t>> add_device_counts(
      CountTable table, const std::vector<DeviceCountChange>& changes) = 0;
  // The count of one key (0 if absent); for checks.
  virtual Outcome<uint64_t> device_count(CountTable table, uint32_t metric_id, int64_t period_start,
                                         uint64_t device_nonce) = 0;
  // The metric's kBucket counts with bucket_start in [from, to), each device's
  // summed per period of `period_seconds` (bucket_start rounded down to a
  // multiple; 0: the whole range is one period, start 0), ordered by
  // period; periods without counts are absent. One grouped query: O(rows
  // of counts in the range), never a scan of raw reports.
  virtual Outcome<std::vector<PeriodDeviceCounts>> device_count_sums(uint32_t metric_id,
                                                                     int64_t from, int64_t to,
                                                                     int64_t period_seconds) = 0;
  // Deletes the metric's counts in `table` with period_start < before
  // (with its reports).
  virtual Fallible delete_device_counts_before(CountTable table, uint32_t metric_id,
                                               int64_t before) = 0;

  // One node's rows of `table` for these (metric, start) keys (the bucket's
  // or the day's start), in key order, nullopt where absent: one statement
  // for a whole commit's keys (a round trip each on PostgreSQL).
  virtual Outcome<std::vector<std::optional<AggregateRow>>> load_node_aggregates(
      AggregateTable table, int64_t node_id,
      const std::vector<std::pair<uint32_t, int64_t>>& keys) = 0;
  // Writes each row (row.bucket_start: the bucket's or the day's start),
  // replacing the row of its key; keys distinct. One statement.
  virtual Fallible upsert_aggregates(AggregateTable table,
                                     const std::vector<AggregateRow>& rows) = 0;
  // Every node's bucket rows with bucket_start in [from, to), ordered by
  // bucket, then node.
  virtual Outcome<std::vector<AggregateRow>> load_aggregates(uint32_t metric_id, int64_t from,
                                                             int64_t to) = 0;
  // Every node's bucket rows of the metric with bucket_start in [from, to),
  // and the day rows of every day that overlaps [from, to) (that day is read
  // from its bucket rows until the next roll-up of it).
  virtual Fallible delete_aggregates(uint32_t metric_id, int64_t from, int64_t to) = 0;
  // The metric's buckets that have raw reports or aggregate rows, ascending.
  virtual Outcome<std::vector<int64_t>> metric_buckets(uint32_t metric_id) = 0;
  // Inside a write transaction: locks each (metric, bucket start) until it
  // ends, shared (a writer about to add to its aggregate rows) or exclusive
  // (a rebuild of the bucket's aggregates from its raw reports). A rebuild
  // and the writers of its bucket take turns; writers never wait for each
  // other. Keys sorted. SQLite: nothing to do, its write transactions take
  // turns already.
  virtual Fallible lock_buckets(const std::vector<std::pair<uint32_t, int64_t>>& keys,
                                bool exclusive) = 0;

  // Raw reports in daily partitions (PostgreSQL: declarative partitions of
  // `reports` by bucket_start, one per UTC day; insert_reports creates the
  // ones its rows need). SQLite keeps one table: false, and the two calls
  // below find and drop nothing.
  virtual bool partitions_reports() const = 0;
  // Outside a transaction: makes sure the partitions for these bucket starts
  // (and the day after each) exist, creating the missing ones in a short
  // transaction of their own. insert_reports creates what is still missing
  // in the caller's transaction, but creating a partition locks the whole
  // table until that transaction ends: writers call this first.
  virtual Fallible prepare_report_partitions(const std::vector<int64_t>& bucket_starts) = 0;
  // The day starts (UTC midnights, Unix s) of the partitions, ascending.
  virtual Outcome<std::vector<int64_t>> report_partition_days() = 0;
  // Outside a transaction: drops every partition whose day ends at or
  // before `before`, and returns their day starts.
  virtual Outcome<std::vector<int64_t>> drop_report_partitions_before(int64_t before) = 0;

  // Retired metrics (schema 4): the metric id and when it was retired (Unix s).
  virtual Outcome<std::vector<std::pair<uint32_t, int64_t>>> load_retired_metrics() = 0;
  // Records the retirement unless one is recorded; returns the time stored.
  virtual Outcome<int64_t> retire_metric(uint32_t metric_id, int64_t retired_at) = 0;
  // What an estimate over [from, to) reads: for each rolled-up day starting
  // in [days_from, days_to) (midnights; the whole days of the range) its day
  // rows (bucket_start: the day's start), and bucket rows for the rest of
  // the range; ordered by start, then node. One statement, so one snapshot:
  // a roll-up committing meanwhile is seen entirely or not at all.
  virtual Outcome<std::vector<AggregateRow>> load_aggregates_by_day(uint32_t metric_id,
                                                                    int64_t from, int64_t to,
                                                                    int64_t days_from,
                                                                    int64_t days_to) = 0;
  // The distinct bucket starts of the metric's bucket rows in [from, to),
  // ascending (how many buckets an estimate spans, without their rows).
  virtual Outcome<std::vector<int64_t>> aggregate_bucket_starts(uint32_t metric_id, int64_t from,
                                                                int64_t to) = 0;
  // The days before `before` (a midnight) that have bucket rows and no day
  // rows: what a roll-up has left to do, ascending.
  virtual Outcome<std::vector<int64_t>> days_to_roll_up(uint32_t metric_id, int64_t before) = 0;
  // Inside a write transaction: locks the days (sorted, distinct) until it
  // ends, shared (writers into them) or exclusive (the roll-up of one), and
  // then reads whether each is rolled up. A roll-up and a write into its day
  // never interleave (SQLite: write transactions are serialized already;
  // PostgreSQL: transaction-scoped advisory locks).
  virtual Outcome<std::vector<bool>> lock_days(const std::vector<MetricDay>& days,
                                               bool exclusive) = 0;

  // Devices (schema 3). The nonce's row, if enrolled.
  virtual Outcome<std::optional<DeviceRow>> find_device(uint64_t device_nonce) = 0;
  // Inserts the row unless its nonce is there: false (and nothing written)
  // if it was. A concurrent uncommitted insert of the nonce is waited for.
  virtual Outcome<bool> insert_device(const DeviceRow& row) = 0;
  virtual Fallible set_device_renewed(uint64_t device_nonce, int64_t renewed_at) = 0;
  // Whether any report of the nonce is stored (one index probe).
  virtual Outcome<bool> has_reports(uint64_t device_nonce) = 0;
  // Devices whose first enrollment is at or after `since` (Unix s).
  virtual Outcome<uint64_t> count_devices_enrolled_since(int64_t since) = 0;

  // For the operator (readiness, metrics): a trivial query that reads the
  // database, and the space the database takes on disk, in bytes.
  virtual Fallible ping() = 0;
  // Inside a write transaction: a write that changes nothing, to learn
  // whether the database takes writes again after commits failed.
  virtual Fallible probe_write() = 0;
  virtual Outcome<uint64_t> size_bytes() = 0;
};

// A database: opens sessions on it.
class Database {
 public:
  virtual ~Database() = default;
  virtual Outcome<std::unique_ptr<Connection>> connect() = 0;
  // For messages and logs, without credentials: "sqlite:blur.db", "postgresql://host/db".
  virtual std::string describe() const = 0;
};

// "PATH" or "sqlite:PATH" (embedded, the default) or "postgresql://..." /
// "postgres://..." (libpq connection URI). kInvalid for an unknown scheme.
Outcome<std::unique_ptr<Database>> open_database(const std::string& url);

}  // namespace blur::collector::store

#endif  // BLUR_COLLECTOR_STORE_BACKEND_H
