#include "store/store.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>
#include <tuple>

#include "aggregate/payload.h"
#include "util/time_text.h"
#include "mechanisms/mechanism_spec.h"

namespace blur::collector {

using store::AggregateRow;
using store::AggregateTable;
using store::Connection;
using store::CountTable;
using store::MetricDay;
using store::ReportKey;
using store::ReportRow;
using store::TimeSource;

namespace {

int64_t floor_to(int64_t t, int64_t width) {
  const int64_t q = t / width;
  return (t % width != 0 && t < 0 ? q - 1 : q) * width;
}

std::string describe_retirement(uint32_t metric_id, int64_t retired_at) {
  return "metric " + std::to_string(metric_id) + " was retired at " + format_time(retired_at) +
         " and accepts no new reports";
}

// The aggregate of the metric's raw reports in the range, read on `c`.
Outcome<Aggregate> raw_aggregate(Connection& c, const MetricConfig& metric, TimeRange range) {
  Aggregate total(metric);
  bool corrupt = false;
  auto status = c.scan_reports(metric.id, range.from, range.to, [&](const ReportRow& row) {
    IncomingReport report;
    if (!unflatten_payload(metric, row.payload, &report)) {
      corrupt = true;
      return false;
    }
    total.add(report);
    return true;
  });
  if (!status) return status.error();
  if (corrupt) return invalid("a stored report of " + collector::describe(metric) + " is corrupt");
  return total;
}

// What makes two reports under one key the same report.
bool same_report(const ReportRow& a, const ReportRow& b) {
  return a.metric_id == b.metric_id && a.epsilon_micros == b.epsilon_micros &&
         a.device_minute == b.device_minute && a.payload == b.payload;
}
}  // namespace

bool rolls_up(const MetricConfig& metric) {
  return metric.bucket_seconds < kSecondsPerDay &&
         !mechanism_spec(metric.mechanism).discovers_words;
}

ReportTime report_time(const MetricConfig& metric, uint32_t device_minute, int64_t received_at,
                       int64_t max_report_age_seconds) {
  const int64_t observed = int64_t{device_minute} * 60;
  const int64_t oldest = received_at - std::min(int64_t{metric.retention_days} * kSecondsPerDay,
                                                max_report_age_seconds);
  const bool plausible =
      device_minute != 0 && observed <= received_at + kClockSkewSeconds && observed >= oldest;
  const int64_t t = plausible ? observed : received_at;
  return {floor_to(t, metric.bucket_seconds),
          plausible ? TimeSource::kDevice : TimeSource::kReceived};
}

// ---- readers ------------------------------------------------------------------

class Store::Reader {
 public:
  Reader(const Store* store, std::unique_ptr<Connection> connection)
      : store_(store), connection_(std::move(connection)) {}
  Reader(Reader&&) = default;
  ~Reader() {
    if (!connection_) return;
    std::lock_guard<std::mutex> lock(store_->readers_mutex_);
    store_->idle_readers_.push_back(std::move(connection_));
  }
  Connection* operator->() { return connection_.get(); }
  // A connection that failed may be broken: do not return it to the pool.
  void discard() { connection_.reset(); }

 private:
  const Store* store_;
  std::unique_ptr<Connection> connection_;
};

Outcome<Store::Reader> Store::reader() const {
  {
    std::lock_guard<std::mutex> lock(readers_mutex_);
    if (!idle_readers_.empty()) {
      auto connection = std::move(idle_readers_.back());
      idle_readers_.pop_back();
      return Reader(this, std::move(connection));
    }
  }
  auto connection = database_->connect();
  if (!connection) return connection.error();
  return Reader(this, std::move(connection).value());
}

template <typename Read>
auto Store::read(Read read_with) const -> decltype(read_with(std::declval<Connection&>())) {
  auto r = reader();
  if (!r) return r.error();
  auto result = read_with(*r->operator->());
  if (!result) r->discard();
  return result;
}

// ---- opening ------------------------------------------------------------------

Store::Store(std::unique_ptr<store::Database> database, StoreOptions options)
    : database_(std::move(database)), options_(options) {}

Store::~Store() = default;

Outcome<std::unique_ptr<Store>> Store::open(const std::string& url, Mode mode,
                                            StoreOptions options) {
  if (options.max_report_age_seconds <= 0) {
    return invalid("the maximum report age must be positive");
  }
  if (options.duplicate_window_seconds <= 0) {
    return invalid("the duplicate window must be positive");
  }
  auto database = store::open_database(url);
  if (!database) return database.error();
  std::unique_ptr<Store> store(new Store(std::move(database).value(), options));
  auto connection = store->database_->connect();
  if (!connection) return connection.error();
  if (auto status = (*connection)->ensure_schema(); !status) return status.error();
  store->partitions_reports_ = (*connection)->partitions_reports();
  if (mode == Mode::kReadWrite) {
    store->writer_ = std::move(connection).value();
    store->commit_sync_ = store->writer_->commit_sync();
  } else {
    store->idle_readers_.push_back(std::move(connection).value());
  }
  if (auto status = store->load_metrics(); !status) return status.error();
  return store;
}

std::string Store::describe() const { return database_->describe(); }

Fallible Store::load_metrics() {
  auto rows = read([](Connection& c) { return c.load_metrics(); });
  if (!rows) return rows.error();
  auto retired = read([](Connection& c) { return c.load_retired_metrics(); });
  if (!retired) return retired.error();
  std::map<uint32_t, MetricConfig> metrics;
  for (const auto& [id, text] : rows.value()) {
    auto config = config_from_text(text);
    if (!config) return config.error();
    if (config->id != id) return invalid("stored metric " + std::to_string(id) + " is corrupt");
    metrics.emplace(id, config.value());
  }
  std::unique_lock<std::shared_mutex> lock(metrics_mutex_);
  metrics_ = std::move(metrics);
  retired_ = std::map<uint32_t, int64_t>(retired->begin(), retired->end());
  return done();
}

Outcome<int64_t> Store::node_id() {
  if (node_id_) return *node_id_;
  if (!writer_) return invalid("the store was opened read-only");
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  ++node_segments_;
  auto id = writer_->register_node(
      std::string(host) + " pid " + std::to_string(getpid()) +
      (node_segments_ > 1 ? " (aggregate rows, part " + std::to_string(node_segments_) + ")"
                          : ""));
  if (!id) return id.error();
  node_id_ = id.value();
  return *node_id_;
}

// ---- metrics ------------------------------------------------------------------

Fallible Store::register_metric(const MetricConfig& metric) {
  if (const std::string problem = check_metric(metric); !problem.empty()) {
    return invalid(collector::describe(metric) + ": " + problem);
  }
  std::lock_guard<std::mutex> writer_lock(writer_mutex_);
  if (!writer_) return invalid("the store was opened read-only");
  auto inserted = writer_->insert_metric(metric.id, config_to_text(metric));
  if (!inserted) return inserted.error();
  if (!inserted.value()) {
    // Registered before (by this or another node): it must be identical.
    if (auto status = load_metrics(); !status) return status;
    const auto stored = this->metric(metric.id);
    if (!stored) return unavailable("metric " + std::to_string(metric.id) + " vanished");
    if (*stored != metric) {
      return Error{Error::Kind::kConflict, "metric " + std::to_string(metric.id) +
                                               " is already registered with another "
                                               "configuration (" +
                                               first_difference(*stored, metric) +
                                               "); a changed metric needs a new metric id"};
    }
    return done();
  }
  std::unique_lock<std::shared_mutex> lock(metrics_mutex_);
  metrics_[metric.id] = metric;
  return done();
}

Outcome<std::vector<uint32_t>> Store::reload_metrics() {
  const std::vector<MetricConfig> before = metrics();
  if (auto status = load_metrics(); !status) return status.error();
  std::vector<uint32_t> added;
  std::shared_lock<std::shared_mutex> lock(metrics_mutex_);
  for (const auto& [id, metric] : metrics_) {
    const bool known = std::any_of(before.begin(), before.end(),
                                   [id = id](const MetricConfig& m) { return m.id == id; });
    if (!known) added.push_back(id);
  }
  return added;
}

std::optional<MetricConfig> Store::metric(uint32_t id) const {
  std::shared_lock<std::shared_mutex> lock(metrics_mutex_);
  const auto it = metrics_.find(id);
  if (it == metrics_.end()) return std::nullopt;
  return it->second;
}

std::vector<MetricConfig> Store::metrics() const {
  std::shared_lock<std::shared_mutex> lock(metrics_mutex_);
  std::vector<MetricConfig> all;
  for (const auto& entry : metrics_) all.push_back(entry.second);
  return all;
}

std::optional<int64_t> Store::retired_at(uint32_t id) const {
  std::shared_lock<std::shared_mutex> lock(metrics_mutex_);
  const auto it = retired_.find(id);
  if (it == retired_.end()) return std::nullopt;
  return it->second;
}

Outcome<int64_t> Store::retire_metric(uint32_t id, int64_t now) {
  if (!metric(id)) {
    return Error{Error::Kind::kNotFound,
                 "unknown metric " + std::to_string(id) + " in " + describe()};
  }
  int64_t retired_at = now;
  if (auto status = write_transaction(false,
                                      [&](Connection& c) -> Fallible {
                                        auto stored = c.retire_metric(id, now);
                                        if (!stored) return stored.error();
                                        retired_at = stored.value();
                                        return done();
                                      });
      !status) {
    return status.error();
  }
  std::unique_lock<std::shared_mutex> lock(metrics_mutex_);
  retired_[id] = retired_at;
  return retired_at;
}

// ---- writes -------------------------------------------------------------------

Outcome<std::vector<BatchOutcome>> Store::insert(const std::vector<ReceivedBatch>& batches,
                                                 bool defer_sync) {
  // Rows for every report, in batch order; first_row[i] is where batch i starts.
  std::vector<ReportRow> rows;
  std::vector<size_t> first_row;
  std::vector<const MetricConfig*> row_metric;
  std::vector<const IncomingReport*> row_report;
  std::map<uint32_t, MetricConfig> metrics;
  std::map<uint32_t, int64_t> retired;
  {
    std::shared_lock<std::shared_mutex> lock(metrics_mutex_);
    metrics = metrics_;
    retired = retired_;
  }
  std::vector<BatchOutcome> outcomes(batches.size());
  int64_t earliest_arrival = INT64_MAX;
  for (size_t b = 0; b < batches.size(); ++b) {
    const ReceivedBatch& received = batches[b];
    first_row.push_back(rows.size());
    earliest_arrival = std::min(earliest_arrival, received.received_at);
    std::set<uint32_t> refused_metrics;
    for (const IncomingReport& report : received.batch->reports) {
      const auto metric = metrics.find(report.metric_id);
      if (metric == metrics.end()) {
        return invalid("unknown metric " + std::to_string(report.metric_id));
      }
      if (const auto when = retired.find(report.metric_id); when != retired.end()) {
        BatchOutcome& outcome = outcomes[b];
        ++outcome.retired;
        if (refused_metrics.insert(report.metric_id).second) {
          outcome.retired_metrics.push_back(report.metric_id);
          outcome.retired_message += (outcome.retired_message.empty() ? "" : "; ") +
                                     describe_retirement(report.metric_id, when->second);
        }
        continue;
      }
      const ReportTime time = report_time(metric->second, report.observed_minute,
                                          received.received_at, options_.max_report_age_seconds);
      ReportRow row;
      row.device_nonce = received.batch->device_nonce;
      row.report_id = report.report_id;
      row.metric_id = report.metric_id;
      row.epsilon_micros = report.epsilon_micros;
      row.device_minute = report.observed_minute;
      row.bucket_start = time.bucket_start;
      row.received_at = received.received_at;
      row.time_source = time.source;
      row.sdk_version = received.batch->sdk_version;
      row.payload = flatten_payload(report);
      rows.push_back(std::move(row));
      row_metric.push_back(&metric->second);
      row_report.push_back(&report);
    }
  }
  first_row.push_back(rows.size());

  std::lock_guard<std::mutex> writer_lock(writer_mutex_);
  if (!writer_) return invalid("the store was opened read-only");
  auto node = node_id();
  if (!node) return node.error();
  auto fail = [&](const Error& error) -> Outcome<std::vector<BatchOutcome>> {
    writer_->rollback();
    return error;
  };
  // Daily partitions (PostgreSQL) are created outside the transaction: a
  // new partition locks the whole table until its transaction ends.
  std::vector<int64_t> buckets_written;
  for (const ReportRow& row : rows) buckets_written.push_back(row.bucket_start);
  if (auto status = writer_->prepare_report_partitions(buckets_written); !status) {
    return status.error();
  }
  if (auto status = defer_sync && commit_sync_ ? writer_->begin_lazy() : writer_->begin();
      !status) {
    return status.error();
  }
  // Where duplicates are looked for in daily partitions (PostgreSQL): the
  // buckets a report first received a duplicate window ago could be in.
  const int64_t duplicate_since =
      earliest_arrival == INT64_MAX
          ? INT64_MIN
          : floor_to(earliest_arrival - options_.duplicate_window_seconds -
                         options_.max_report_age_seconds,
                     kSecondsPerDay) -
                kSecondsPerDay;
  auto inserted = writer_->insert_reports(rows, duplicate_since);
  if (!inserted) return fail(inserted.error());

  // Keys that existed: identical reports are duplicates, others conflicts.
  std::vector<ReportKey> existing_keys;
  std::vector<size_t> existing_rows;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!inserted.value()[i]) {
      existing_keys.push_back({rows[i].device_nonce, rows[i].report_id});
      existing_rows.push_back(i);
    }
  }
  if (!existing_keys.empty()) {
    auto stored = writer_->find_reports(existing_keys);
    if (!stored) return fail(stored.error());
    size_t batch = 0;
    for (size_t k = 0; k < existing_rows.size(); ++k) {
      const size_t i = existing_rows[k];
      while (first_row[batch + 1] <= i) ++batch;
      const auto& found = stored.value()[k];
      if (found && same_report(*found, rows[i])) continue;  // a duplicate
      BatchOutcome& outcome = outcomes[batch];
      if (!outcome.conflict) {
        outcome.conflict = true;
        outcome.conflict_report_id = rows[i].report_id;
        outcome.conflict_message =
            "report id " + std::to_string(rows[i].report_id) + " of this device is already " +
            "stored with other content (" +
            (!found                                  ? std::string("vanished")
             : found->metric_id != rows[i].metric_id ? "metric " + std::to_string(found->metric_id)
             : found->epsilon_micros != rows[i].epsilon_micros
                 ? "epsilon_micros " + std::to_string(found->epsilon_micros)
             : found->device_minute != rows[i].device_minute
                 ? "observed_minute " + std::to_string(found->device_minute)
                 : std::string("another payload")) +
            "): report ids must never be reused; nothing of this batch was stored";
      }
    }
  }
  // A conflicting batch stores nothing: take back what it inserted.
  std::vector<ReportKey> take_back;
  for (size_t b = 0; b < batches.size(); ++b) {
    if (!outcomes[b].conflict) continue;
    for (size_t i = first_row[b]; i < first_row[b + 1]; ++i) {
      if (inserted.value()[i]) take_back.push_back({rows[i].device_nonce, rows[i].report_id});
    }
  }
  if (!take_back.empty()) {
    if (auto status = writer_->delete_reports(take_back); !status) return fail(status.error());
  }
  // What stays stored: new reports of batches without a conflict, within
  // the contribution bound.
  std::vector<bool> stored(rows.size(), false);
  std::vector<std::optional<CountTable>> over(rows.size());
  for (size_t b = 0; b < batches.size(); ++b) {
    if (outcomes[b].conflict) continue;
    for (size_t i = first_row[b]; i < first_row[b + 1]; ++i) stored[i] = inserted.value()[i];
  }
  if (auto status = bound_contributions(rows, row_metric, &stored, &over); !status) {
    return fail(status.error());
  }
  // The stored reports, added to this node's aggregates.
  std::map<std::pair<uint32_t, int64_t>, Aggregate> deltas;
  for (size_t b = 0; b < batches.size(); ++b) {
    if (outcomes[b].conflict) continue;
    BatchOutcome& outcome = outcomes[b];
    // The bounds that refused some of this batch, by metric.
    std::set<std::pair<uint32_t, CountTable>> bounded;
    for (size_t i = first_row[b]; i < first_row[b + 1]; ++i) {
      if (!inserted.value()[i]) {
        ++outcome.duplicates;
        continue;
      }
      // The device sent a time, and it was not used.
      if (rows[i].device_minute != 0 && rows[i].time_source == TimeSource::kReceived) {
        ++outcome.implausible_time;
      }
      if (over[i]) {
        ++outcome.over_limit;
        if (std::find(outcome.over_limit_metrics.begin(), outcome.over_limit_metrics.end(),
                      rows[i].metric_id) == outcome.over_limit_metrics.end()) {
          outcome.over_limit_metrics.push_back(rows[i].metric_id);
        }
        if (bounded.emplace(rows[i].metric_id, *over[i]).second) {
          outcome.limit_message +=
              (outcome.limit_message.empty() ? "" : "; ") +
              (*over[i] == CountTable::kBucket ? describe_bound(*row_metric[i])
                                               : describe_daily_bound(*row_metric[i]));
        }
        continue;
      }
      ++outcome.inserted;
      const auto key = std::make_pair(rows[i].metric_id, rows[i].bucket_start);
      auto delta = deltas.find(key);
      if (delta == deltas.end()) delta = deltas.emplace(key, Aggregate(*row_metric[i])).first;
      delta->second.add(*row_report[i]);
    }
  }
  rotate_node_after_commit_ = false;
  // The deltas' buckets, shared: a rebuild of one of them (reaggregate)
  // waits for this commit, or this waits for the rebuild's.
  std::vector<std::pair<uint32_t, int64_t>> buckets;
  for (const auto& entry : deltas) buckets.push_back(entry.first);
  if (auto status = writer_->lock_buckets(buckets, false); !status) return fail(status.error());
  if (auto status = add_to_own_aggregates(deltas); !status) return fail(status.error());
  if (auto status = writer_->commit(); !status) return fail(status.error());
  if (rotate_node_after_commit_) node_id_.reset();  // the next write starts new rows
  return outcomes;
}

// Two bounds, each counted in its own table: per (metric, bucket, device)
// the contribution bound, then per (metric, UTC day of arrival, device) the
// receive-time allowance over the rows the first let through. For each, one
// upsert per key of the group adds its new reports to the stored count and
// returns the total: the count before is total - new, and the first
// (limit - before) new rows in batch order stay. Only when a device went
// over (rare for honest ones) a last upsert per table takes the refused
// rows back out of the counts that counted them, and the rows are deleted.
// Duplicates were never inserted, so they never count twice. Every writer
// locks its kBucket keys, then its kReceiveDay keys, each in key order.
Fallible Store::bound_contributions(const std::vector<ReportRow>& rows,
                                    const std::vector<const MetricConfig*>& row_metric,
                                    std::vector<bool>* stored,
                                    std::vector<std::optional<CountTable>>* over) {
  using CountKey = std::tuple<uint32_t, int64_t, uint64_t>;  // metric, period, device
  using Groups = std::map<CountKey, std::vector<size_t>>;    // sorted keys: one lock order
  struct Bound {
    CountTable table;
    Groups counted;  // the rows this bound counted, by key
  };
  Bound bounds[] = {{CountTable::kBucket, {}}, {CountTable::kReceiveDay, {}}};
  bool refused_any = false;
  for (Bound& bound : bounds) {
    for (size_t i = 0; i < rows.size(); ++i) {
      if (!(*stored)[i]) continue;
      const int64_t period = bound.table == CountTable::kBucket
                                 ? rows[i].bucket_start
                                 : floor_to(rows[i].received_at, kSecondsPerDay);
      bound.counted[{rows[i].metric_id, period, rows[i].device_nonce}].push_back(i);
    }
    if (bound.counted.empty()) continue;
    std::vector<store::DeviceCountChange> changes;
    changes.reserve(bound.counted.size());
    for (const auto& [key, indices] : bound.counted) {
      changes.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key),
                         static_cast<int64_t>(indices.size())});
    }
    auto totals = writer_->add_device_counts(bound.table, changes);
    if (!totals) return totals.error();
    size_t k = 0;
    for (const auto& [key, indices] : bound.counted) {
      const uint64_t requested = indices.size();
      const uint64_t before = totals.value()[k++] - requested;
      const MetricConfig& metric = *row_metric[indices.front()];
      const uint64_t limit = bound.table == CountTable::kBucket ? reports_per_bucket_limit(metric)
                                                                : reports_per_day_limit(metric);
      const uint64_t accepted = before >= limit ? 0 : std::min(requested, limit - before);
      for (size_t j = accepted; j < requested; ++j) {
        (*stored)[indices[j]] = false;
        (*over)[indices[j]] = bound.table;
        refused_any = true;
      }
    }
  }
  if (!refused_any) return done();
  // A row refused by either bound leaves every count that counted it.
  for (const Bound& bound : bounds) {
    std::vector<store::DeviceCountChange> excess;
    for (const auto& [key, indices] : bound.counted) {
      const auto refused =
          std::count_if(indices.begin(), indices.end(), [&](size_t i) { return !(*stored)[i]; });
      if (refused != 0) {
        excess.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), -refused});
      }
    }
    if (excess.empty()) continue;
    if (auto taken = writer_->add_device_counts(bound.table, excess); !taken) {
      return taken.error();
    }
  }
  std::vector<ReportKey> refused;
  for (size_t i = 0; i < rows.size(); ++i) {
    if ((*over)[i]) refused.push_back({rows[i].device_nonce, rows[i].report_id});
  }
  return writer_->delete_reports(refused);
}

// Each node owns its aggregate rows: read ours, add, write back. Nodes never
// contend on a row, and merging nodes' rows at read time is a sum. A bucket
// of a rolled-up day also adds to the node's day row, so that each node's
// day row stays the sum of its bucket rows of the day; the day is locked
// first (shared), so a roll-up of it runs wholly before or after this.
Fallible Store::add_to_own_aggregates(
    const std::map<std::pair<uint32_t, int64_t>, Aggregate>& deltas) {
  std::map<MetricDay, std::vector<const Aggregate*>> days;
  for (const auto& [key, delta] : deltas) {
    if (rolls_up(delta.metric())) {
      days[MetricDay{key.first, floor_to(key.second, kSecondsPerDay)}].push_back(&delta);
    }
  }
  std::vector<bool> rolled_up;
  if (!days.empty()) {
    std::vector<MetricDay> keys;
    for (const auto& entry : days) keys.push_back(entry.first);
    auto locked = writer_->lock_days(keys, false);
    if (!locked) return locked.error();
    rolled_up = std::move(locked).value();
  }
  std::vector<std::pair<uint32_t, int64_t>> bucket_keys;
  std::vector<const Aggregate*> bucket_deltas;
  for (const auto& [key, delta] : deltas) {
    bucket_keys.push_back(key);
    bucket_deltas.push_back(&delta);
  }
  if (auto status = add_to_own_rows(AggregateTable::kBucket, bucket_keys, bucket_deltas);
      !status) {
    return status;
  }
  std::vector<std::pair<uint32_t, int64_t>> day_keys;
  std::vector<Aggregate> day_sums;
  size_t k = 0;
  for (const auto& [day, day_deltas] : days) {
    if (!rolled_up[k++]) continue;
    Aggregate sum(day_deltas.front()->metric());
    for (const Aggregate* delta : day_deltas) sum.merge(*delta);
    day_keys.emplace_back(day.metric_id, day.day_start);
    day_sums.push_back(std::move(sum));
  }
  std::vector<const Aggregate*> day_deltas;
  for (const Aggregate& sum : day_sums) day_deltas.push_back(&sum);
  return add_to_own_rows(AggregateTable::kDay, day_keys, day_deltas);
}

// One read of the node's rows for all keys, one write back.
Fallible Store::add_to_own_rows(AggregateTable table,
                                const std::vector<std::pair<uint32_t, int64_t>>& keys,
                                const std::vector<const Aggregate*>& deltas) {
  if (keys.empty()) return done();
  auto stored_rows = writer_->load_node_aggregates(table, *node_id_, keys);
  if (!stored_rows) return stored_rows.error();
  std::vector<AggregateRow> rows;
  rows.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    const Aggregate& delta = *deltas[i];
    Aggregate::SerializedSum total;
    if (const auto& row = stored_rows.value()[i]) {
      auto sum = delta.serialize_added_to(row->stats);
      if (!sum) return sum.error();
      total = std::move(sum).value();
    } else {
      total = {delta.serialize(), delta.reports()};
    }
    rotate_node_after_commit_ |= total.bytes.size() > kAggregateRowBytes;
    rows.push_back(AggregateRow{keys[i].first, keys[i].second, *node_id_, total.reports,
                                std::move(total.bytes)});
  }
  return writer_->upsert_aggregates(table, rows);
}

// ---- day roll-ups -------------------------------------------------------------

Outcome<RollUpResult> Store::roll_up(int64_t now, const Cancellation* cancel,
                                     const std::function<void(const MetricDay&)>& after_day_rows) {
  RollUpResult result;
  const int64_t today = floor_to(now, kSecondsPerDay);
  for (const MetricConfig& metric : metrics()) {
    if (!rolls_up(metric)) continue;
    auto days = read([&](Connection& c) { return c.days_to_roll_up(metric.id, today); });
    if (!days) return days.error();
    // One transaction per day: ingestion's commits go on between them.
    for (const int64_t day : days.value()) {
      if (cancel != nullptr && cancel->requested()) return result;
      std::lock_guard<std::mutex> writer_lock(writer_mutex_);
      if (!writer_) return invalid("the store was opened read-only");
      if (auto rolled = roll_up_day(metric, day, after_day_rows, &result); !rolled) {
        writer_->rollback();
        return rolled.error();
      }
    }
  }
  return result;
}

// With the writer held. False if another roll-up did the day first.
Outcome<bool> Store::roll_up_day(const MetricConfig& metric, int64_t day_start,
                                 const std::function<void(const MetricDay&)>& after_day_rows,
                                 RollUpResult* result) {
  const MetricDay day{metric.id, day_start};
  if (auto status = writer_->begin(); !status) return status.error();
  auto rolled_up = writer_->lock_days({day}, true);
  if (!rolled_up) return rolled_up.error();
  if (rolled_up.value().front()) {
    writer_->rollback();
    return false;
  }
  auto rows = writer_->load_aggregates(metric.id, day_start, day_start + kSecondsPerDay);
  if (!rows) return rows.error();
  std::map<int64_t, Aggregate> by_node;
  for (const AggregateRow& row : rows.value()) {
    auto node = by_node.try_emplace(row.node_id, metric).first;
    if (auto added = node->second.add_serialized(row.stats); !added) return added.error();
  }
  std::vector<AggregateRow> day_rows;
  for (const auto& [node, total] : by_node) {
    day_rows.push_back(AggregateRow{metric.id, day_start, node, total.reports(), total.serialize()});
  }
  if (auto status = writer_->upsert_aggregates(AggregateTable::kDay, day_rows); !status) {
    return status.error();
  }
  if (after_day_rows) after_day_rows(day);
  if (auto status = writer_->commit(); !status) return status.error();
  ++result->days;
  result->day_rows += by_node.size();
  result->bucket_rows += rows->size();
  return true;
}

// ---- reads --------------------------------------------------------------------

Outcome<std::vector<AggregateRow>> Store::load_aggregate_rows(const MetricConfig& metric,
                                                              TimeRange range, bool by_day) const {
  // The range's whole days, [days_from, days_to) in midnights (an open end
  // contains every day).
  const int64_t days_from = range.from < INT64_MIN / 2
                                ? INT64_MIN
                                : floor_to(range.from + kSecondsPerDay - 1, kSecondsPerDay);
  const int64_t days_to = range.to > INT64_MAX / 2 ? INT64_MAX : floor_to(range.to, kSecondsPerDay);
  if (!by_day || !rolls_up(metric) || days_from >= days_to) {
    return read([&](Connection& c) { return c.load_aggregates(metric.id, range.from, range.to); });
  }
  return read([&](Connection& c) {
    return c.load_aggregates_by_day(metric.id, range.from, range.to, days_from, days_to);
  });
}

Outcome<std::map<int64_t, uint64_t>> Store::bucket_counts(const MetricConfig& metric,
                                                          TimeRange range,
                                                          int64_t period_seconds) const {
  auto starts = read(
      [&](Connection& c) { return c.aggregate_bucket_starts(metric.id, range.from, range.to); });
  if (!starts) return starts.error();
  std::map<int64_t, uint64_t> counts;
  for (const int64_t start : starts.value()) {
    ++counts[period_seconds == 0 ? 0 : floor_to(start, period_seconds)];
  }
  return counts;
}

Outcome<std::vector<PeriodAggregate>> Store::period_aggregates(const MetricConfig& metric,
                                                               TimeRange range,
                                                               int64_t period_seconds,
                                                               bool count_buckets,
                                                               const Cancellation* cancel) const {
  if (period_seconds <= 0) return invalid("a period must be positive");
  const bool by_day = period_seconds % kSecondsPerDay == 0;
  auto rows = load_aggregate_rows(metric, range, by_day);
  if (!rows) return rows.error();
  // Rows are ordered by start: each period's rows are consecutive.
  std::vector<PeriodAggregate> periods;
  std::vector<size_t> row_period(rows->size());
  std::vector<size_t> bytes;  // per period: room for the cells before adding
  for (size_t i = 0; i < rows->size(); ++i) {
    const int64_t start = floor_to(rows.value()[i].bucket_start, period_seconds);
    if (periods.empty() || periods.back().start != start) {
      periods.push_back({start, Aggregate(metric), 0});
      bytes.push_back(0);
    }
    row_period[i] = periods.size() - 1;
    bytes.back() += rows.value()[i].stats.size();
  }
  for (size_t p = 0; p < periods.size(); ++p) periods[p].aggregate.reserve_serialized(bytes[p]);
  for (size_t i = 0; i < rows->size(); ++i) {
    if (cancel != nullptr && cancel->requested()) return unavailable("the read was cancelled");
    const AggregateRow& row = rows.value()[i];
    PeriodAggregate& period = periods[row_period[i]];
    if (i == 0 || row.bucket_start != rows.value()[i - 1].bucket_start) ++period.buckets;
    if (auto added = period.aggregate.add_serialized(row.stats); !added) return added.error();
  }
  if (count_buckets && by_day && rolls_up(metric)) {
    // Day rows stand for several buckets: count them from the bucket rows' keys.
    auto counts = bucket_counts(metric, range, period_seconds);
    if (!counts) return counts.error();
    for (PeriodAggregate& p : periods) p.buckets = counts.value()[p.start];
  }
  return periods;
}

Outcome<Aggregate> Store::aggregate(const MetricConfig& metric, TimeRange range, uint64_t* buckets,
                                    const Cancellation* cancel) const {
  auto rows = load_aggregate_rows(metric, range, true);
  if (!rows) return rows.error();
  Aggregate total(metric);
  size_t bytes = 0;
  for (const AggregateRow& row : rows.value()) bytes += row.stats.size();
  total.reserve_serialized(bytes);
  uint64_t distinct = 0;
  for (size_t i = 0; i < rows->size(); ++i) {
    if (cancel != nullptr && cancel->requested()) return unavailable("the read was cancelled");
    const AggregateRow& row = rows.value()[i];
    if (i == 0 || row.bucket_start != rows.value()[i - 1].bucket_start) ++distinct;  // ordered
    if (auto added = total.add_serialized(row.stats); !added) return added.error();
  }
  if (buckets != nullptr && rolls_up(metric)) {
    // Day rows stand for several buckets: count them from the bucket rows' keys.
    auto counts = bucket_counts(metric, range, 0);
    if (!counts) return counts.error();
    distinct = counts.value()[0];
  }
  if (buckets != nullptr) *buckets = distinct;
  return total;
}

Outcome<std::vector<PeriodDeviceCounts>> Store::device_counts(const MetricConfig& metric,
                                                              TimeRange range,
                                                              int64_t period_seconds) const {
  return read([&](Connection& c) {
    return c.device_count_sums(metric.id, range.from, range.to, period_seconds);
  });
}

Outcome<Aggregate> Store::aggregate_from_raw(const MetricConfig& metric, TimeRange range) const {
  return read([&](Connection& c) { return raw_aggregate(c, metric, range); });
}

Outcome<uint64_t> Store::report_count(std::optional<uint32_t> metric_id) const {
  return read([&](Connection& c) { return c.count_reports(metric_id); });
}

Fallible Store::ping() const {
  return read([](Connection& c) { return c.ping(); });
}

Fallible Store::write_transaction(bool lazy, const std::function<Fallible(Connection&)>& write) {
  std::lock_guard<std::mutex> writer_lock(writer_mutex_);
  if (!writer_) return invalid("the store was opened read-only");
  if (auto status = lazy ? writer_->begin_lazy() : writer_->begin(); !status) return status;
  if (auto status = write(*writer_); !status) {
    writer_->rollback();
    return status;
  }
  if (auto status = writer_->commit(); !status) {
    writer_->rollback();
    return status;
  }
  return done();
}

Fallible Store::probe_write() {
  return write_transaction(false, [](Connection& c) { return c.probe_write(); });
}

Outcome<uint64_t> Store::size_bytes() const {
  return read([](Connection& c) { return c.size_bytes(); });
}

Outcome<uint64_t> Store::device_count(uint32_t metric_id, int64_t bucket_start,
                                      uint64_t device_nonce) const {
  return read([&](Connection& c) {
    return c.device_count(CountTable::kBucket, metric_id, bucket_start, device_nonce);
  });
}

Outcome<uint64_t> Store::receive_day_count(uint32_t metric_id, int64_t day_start,
                                           uint64_t device_nonce) const {
  return read([&](Connection& c) {
    return c.device_count(CountTable::kReceiveDay, metric_id, day_start, device_nonce);
  });
}

// ---- devices ------------------------------------------------------------------

Outcome<std::optional<store::DeviceRow>> Store::device(uint64_t device_nonce) const {
  return read([&](Connection& c) { return c.find_device(device_nonce); });
}

Outcome<bool> Store::has_reports(uint64_t device_nonce) const {
  return read([&](Connection& c) { return c.has_reports(device_nonce); });
}

Outcome<store::DeviceRow> Store::bind_device(uint64_t device_nonce,
                                             const std::array<uint8_t, 32>& key_sha256,
                                             int64_t now) {
  store::DeviceRow row;
  row.device_nonce = device_nonce;
  row.enrolled_at = now;
  row.key_sha256 = key_sha256;
  row.last_renewed_at = now;
  std::lock_guard<std::mutex> writer_lock(writer_mutex_);
  if (!writer_) return invalid("the store was opened read-only");
  auto fail = [&](const Error& error) -> Outcome<store::DeviceRow> {
    writer_->rollback();
    return error;
  };
  if (auto status = writer_->begin_lazy(); !status) return status.error();
  auto inserted = writer_->insert_device(row);
  if (!inserted) return fail(inserted.error());
  if (!inserted.value()) {
    // Bound before (by this or another collector): that binding stands.
    auto stored = writer_->find_device(device_nonce);
    if (!stored) return fail(stored.error());
    if (!stored.value()) return fail(unavailable("device binding vanished"));
    row = *stored.value();
  }
  if (auto status = writer_->commit(); !status) return fail(status.error());
  return row;
}

Fallible Store::record_renewal(uint64_t device_nonce, int64_t now) {
  return write_transaction(
      true, [&](Connection& c) { return c.set_device_renewed(device_nonce, now); });
}

Outcome<std::optional<int64_t>> Store::enrolled_at(uint64_t device_nonce) const {
  auto found = device(device_nonce);
  if (!found) return found.error();
  if (!found.value()) return std::optional<int64_t>();
  return std::optional<int64_t>(found.value()->enrolled_at);
}

Outcome<uint64_t> Store::devices_enrolled_since(int64_t since) const {
  return read([&](Connection& c) { return c.count_devices_enrolled_since(since); });
}

// ---- maintenance ---------------------------------------------------------------

// Where raw reports are partitioned by day, a retention ends at a UTC
// midnight: the rows before it are whole partitions.
int64_t Store::retention_cutoff(const MetricConfig& metric, int64_t now) const {
  const int64_t cutoff =
      floor_to(now - int64_t{metric.retention_days} * kSecondsPerDay, metric.bucket_seconds);
  return partitions_reports_ ? floor_to(cutoff, kSecondsPerDay) : cutoff;
}

Outcome<uint64_t> Store::prune(const MetricConfig& metric, int64_t now) {
  const int64_t before = retention_cutoff(metric, now);
  std::lock_guard<std::mutex> writer_lock(writer_mutex_);
  if (!writer_) return invalid("the store was opened read-only");
  if (auto status = writer_->begin(); !status) return status.error();
  auto deleted = writer_->delete_reports_before(metric.id, before);
  if (!deleted) {
    writer_->rollback();
    return deleted.error();
  }
  // The bounds' counts go with the reports they count (no report of a
  // pruned bucket can be stored again: it is older than the retention; and
  // the day of arrival being counted now is within the retention).
  for (const CountTable table : {CountTable::kBucket, CountTable::kReceiveDay}) {
    if (auto status = writer_->delete_device_counts_before(table, metric.id, before); !status) {
      writer_->rollback();
      return status.error();
    }
  }
  if (auto status = writer_->commit(); !status) {
    writer_->rollback();
    return status.error();
  }
  return deleted;
}

// A partition holds every metric's reports of its day: it goes once the
// retention of each (retired ones included) has passed the whole day. No
// report can arrive for it afterwards: report_time() never buckets a
// report before its metric's retention.
Outcome<std::vector<int64_t>> Store::drop_expired_partitions(int64_t now) {
  const std::vector<MetricConfig> all = metrics();
  if (all.empty() || !partitions_reports_) return std::vector<int64_t>{};
  int64_t before = INT64_MAX;
  for (const MetricConfig& metric : all) before = std::min(before, retention_cutoff(metric, now));
  std::lock_guard<std::mutex> writer_lock(writer_mutex_);
  if (!writer_) return invalid("the store was opened read-only");
  return writer_->drop_report_partitions_before(before);
}

Outcome<std::vector<int64_t>> Store::report_partition_days() const {
  return read([](Connection& c) { return c.report_partition_days(); });
}

// One transaction per bucket, so that writers wait at most for one
// bucket's rebuild: its exclusive bucket lock first (waiting for the
// writers that hold it shared to commit), then its raw reports, which
// include every report committed so far, replace all nodes' rows of the
// bucket. A writer after it adds only its own new reports to a row it
// reads after the rebuild committed. A rolled-up day a rebuilt bucket lies
// in loses its day rows (roll_up folds it again).
Outcome<uint64_t> Store::reaggregate(const MetricConfig& metric) {
  auto buckets = read([&](Connection& c) { return c.metric_buckets(metric.id); });
  if (!buckets) return buckets.error();
  uint64_t total = 0;
  auto pause = std::chrono::steady_clock::duration::zero();
  for (const int64_t bucket_start : buckets.value()) {
    // As long as the last bucket took: a rebuild holds the write lock at
    // most half the time. SQLite hands its lock to no one in particular, and
    // writers poll for it every few ms: without the pause they would starve.
    std::this_thread::sleep_for(pause);
    const auto started = std::chrono::steady_clock::now();
    const int64_t bucket_end = bucket_start + metric.bucket_seconds;
    std::lock_guard<std::mutex> writer_lock(writer_mutex_);
    if (!writer_) return invalid("the store was opened read-only");
    auto node = node_id();
    if (!node) return node.error();
    if (auto status = writer_->begin(); !status) return status.error();
    auto fail = [&](const Error& error) -> Outcome<uint64_t> {
      writer_->rollback();
      return error;
    };
    if (auto status = writer_->lock_buckets({{metric.id, bucket_start}}, true); !status) {
      return fail(status.error());
    }
    // Its day too (after the bucket, in the writers' order): the day's roll-up
    // rows are deleted with the bucket's rows below, so that the day reads
    // its bucket rows until the next roll-up folds it again.
    if (rolls_up(metric)) {
      auto day = writer_->lock_days({MetricDay{metric.id, floor_to(bucket_start, kSecondsPerDay)}},
                                    true);
      if (!day) return fail(day.error());
    }
    auto aggregate = raw_aggregate(*writer_, metric, {bucket_start, bucket_end});
    if (!aggregate) return fail(aggregate.error());
    if (auto status = writer_->delete_aggregates(metric.id, bucket_start, bucket_end); !status) {
      return fail(status.error());
    }
    if (aggregate->reports() != 0) {
      if (auto status = writer_->upsert_aggregates(
              AggregateTable::kBucket, {AggregateRow{metric.id, bucket_start, *node_id_,
                                                     aggregate->reports(), aggregate->serialize()}});
          !status) {
        return fail(status.error());
      }
    }
    if (auto status = writer_->commit(); !status) return fail(status.error());
    total += aggregate->reports();
    pause = std::max<std::chrono::steady_clock::duration>(std::chrono::steady_clock::now() - started,
                                                          std::chrono::milliseconds(1));
  }
  return total;
}

}  // namespace blur::collector
