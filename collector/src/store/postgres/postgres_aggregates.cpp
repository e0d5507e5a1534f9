// Aggregate rows on PostgreSQL: per bucket and, since schema 4, per UTC day
// (store/backend.h: AggregateTable), and the day roll-up's locks.
#include "store/postgres/pg_session.h"
#include "store/postgres/pg_wire.h"
#include "store/postgres/postgres_backend.h"
#include "store/postgres/postgres_sql.h"

namespace blur::collector::store {

using pg::ArrayWriter;
using pg::Params;

namespace {

// Rows of (start, node_id, reports, stats).
std::vector<AggregateRow> aggregate_rows(uint32_t metric_id, const pg_result* result) {
  std::vector<AggregateRow> rows;
  rows.reserve(static_cast<size_t>(pg::rows(result)));
  for (int i = 0; i < pg::rows(result); ++i) {
    AggregateRow row;
    row.metric_id = metric_id;
    row.bucket_start = pg::field_int64(result, i, 0);
    row.node_id = pg::field_int64(result, i, 1);
    row.reports = static_cast<uint64_t>(pg::field_int64(result, i, 2));
    row.stats = pg::field_bytes(result, i, 3);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<int64_t> first_column(const pg_result* result) {
  std::vector<int64_t> values;
  values.reserve(static_cast<size_t>(pg::rows(result)));
  for (int i = 0; i < pg::rows(result); ++i) values.push_back(pg::field_int64(result, i, 0));
  return values;
}

}  // namespace

Outcome<std::vector<std::optional<AggregateRow>>> PostgresConnection::load_node_aggregates(
    AggregateTable table, int64_t node_id, const std::vector<std::pair<uint32_t, int64_t>>& keys) {
  std::vector<std::optional<AggregateRow>> found(keys.size());
  if (keys.empty()) return found;
  if (auto ok = usable(); !ok) return ok.error();
  ArrayWriter metric(pg::kInt8Oid, keys.size()), start(pg::kInt8Oid, keys.size());
  for (const auto& [metric_id, period_start] : keys) {
    metric.add_int64(metric_id);
    start.add_int64(period_start);
  }
  auto result = session_->run(
      table == AggregateTable::kBucket ? pg::sql::kLoadAggregate : pg::sql::kLoadDayAggregate,
      Params().array(metric).array(start).int64(node_id));
  if (!result) return result.error();
  for (int i = 0; i < pg::rows(result->get()); ++i) {
    const int64_t position = pg::field_int64(result->get(), i, 0);
    if (position < 1 || static_cast<uint64_t>(position) > keys.size()) {
      return unavailable("the database answered an aggregate row for a key it was not asked");
    }
    const auto& key = keys[static_cast<size_t>(position - 1)];
    AggregateRow row;
    row.metric_id = key.first;
    row.bucket_start = key.second;
    row.node_id = node_id;
    row.reports = static_cast<uint64_t>(pg::field_int64(result->get(), i, 1));
    row.stats = pg::field_bytes(result->get(), i, 2);
    found[static_cast<size_t>(position - 1)] = std::move(row);
  }
  return found;
}

Fallible PostgresConnection::upsert_aggregates(AggregateTable table,
                                               const std::vector<AggregateRow>& rows) {
  if (rows.empty()) return done();
  if (auto ok = usable(); !ok) return ok;
  ArrayWriter metric(pg::kInt8Oid, rows.size()), start(pg::kInt8Oid, rows.size()),
      node(pg::kInt8Oid, rows.size()), reports(pg::kInt8Oid, rows.size()),
      stats(pg::kByteaOid, rows.size());
  for (const AggregateRow& row : rows) {
    metric.add_int64(row.metric_id);
    start.add_int64(row.bucket_start);
    node.add_int64(row.node_id);
    reports.add_int64(static_cast<int64_t>(row.reports));
    stats.add_bytes(row.stats);
  }
  auto result = session_->run(
      table == AggregateTable::kBucket ? pg::sql::kUpsertAggregate : pg::sql::kUpsertDayAggregate,
      Params().array(metric).array(start).array(node).array(reports).array(stats));
  if (!result) return result.error();
  return done();
}

Outcome<std::vector<AggregateRow>> PostgresConnection::load_aggregates(uint32_t metric_id,
                                                                       int64_t from, int64_t to) {
  if (auto ok = usable(); !ok) return ok.error();
  auto result =
      session_->run(pg::sql::kLoadAggregates, Params().int64(metric_id).int64(from).int64(to));
  if (!result) return result.error();
  return aggregate_rows(metric_id, result->get());
}

Outcome<std::vector<AggregateRow>> PostgresConnection::load_aggregates_by_day(
    uint32_t metric_id, int64_t from, int64_t to, int64_t days_from, int64_t days_to) {
  if (auto ok = usable(); !ok) return ok.error();
  auto result = session_->run(
      pg::sql::kLoadAggregatesByDay,
      Params().int64(metric_id).int64(from).int64(to).int64(days_from).int64(days_to));
  if (!result) return result.error();
  return aggregate_rows(metric_id, result->get());
}

Outcome<std::vector<int64_t>> PostgresConnection::aggregate_bucket_starts(uint32_t metric_id,
                                                                          int64_t from,
                                                                          int64_t to) {
  if (auto ok = usable(); !ok) return ok.error();
  auto result = session_->run(pg::sql::kAggregateBucketStarts,
                              Params().int64(metric_id).int64(from).int64(to));
  if (!result) return result.error();
  return first_column(result->get());
}

Outcome<std::vector<int64_t>> PostgresConnection::days_to_roll_up(uint32_t metric_id,
                                                                  int64_t before) {
  if (auto ok = usable(); !ok) return ok.error();
  auto result = session_->run(pg::sql::kDaysToRollUp, Params().int64(metric_id).int64(before));
  if (!result) return result.error();
  return first_column(result->get());
}

Outcome<std::vector<bool>> PostgresConnection::lock_days(const std::vector<MetricDay>& days,
                                                         bool exclusive) {
  std::vector<bool> rolled;
  if (days.empty()) return rolled;
  if (auto ok = usable(); !ok) return ok.error();
  ArrayWriter metric(pg::kInt8Oid, days.size()), day(pg::kInt8Oid, days.size());
  for (const MetricDay& d : days) {
    metric.add_int64(d.metric_id);
    day.add_int64(d.day_start);
  }
  Params keys;
  keys.array(metric).array(day);
  auto locked =
      session_->run(exclusive ? pg::sql::kLockDaysExclusive : pg::sql::kLockDaysShared, keys);
  if (!locked) return locked.error();
  // A statement of its own: READ COMMITTED takes its snapshot now, with the
  // locks held, so a roll-up that committed while we waited is seen.
  auto found = session_->run(pg::sql::kDaysRolledUp, keys);
  if (!found) return found.error();
  if (pg::rows(found->get()) != static_cast<int>(days.size())) {
    return unavailable("the database did not say whether each day is rolled up");
  }
  for (const int64_t value : first_column(found->get())) rolled.push_back(value != 0);
  return rolled;
}

Fallible PostgresConnection::delete_aggregates(uint32_t metric_id, int64_t from, int64_t to) {
  if (auto ok = usable(); !ok) return ok;
  auto buckets =
      session_->run(pg::sql::kDeleteAggregates, Params().int64(metric_id).int64(from).int64(to));
  if (!buckets) return buckets.error();
  auto days = session_->run(pg::sql::kDeleteDayAggregates,
                            Params().int64(metric_id).int64(first_day_overlapping(from)).int64(to));
  if (!days) return days.error();
  return done();
}

}  // namespace blur::collector::store
