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

Outcome<std::optional<AggregateRow>> PostgresConnection::load_aggregate(AggregateTable table,
                                                                        uint32_t metric_id,
                                                                        int64_t bucket_start,
                                                                        int64_t node_id) {
  if (auto ok = usable(); !ok) return ok.error();
  auto result = session_->run(
      table == AggregateTable::kBucket ? pg::sql::kLoadAggregate : pg::sql::kLoadDayAggregate,
      Params().int64(metric_id).int64(bucket_start).int64(node_id));
  if (!result) return result.error();
  if (pg::rows(result->get()) == 0) return std::optional<AggregateRow>();
  AggregateRow row;
  row.metric_id = metric_id;
  row.bucket_start = bucket_start;
  row.node_id = node_id;
  row.reports = static_cast<uint64_t>(pg::field_int64(result->get(), 0, 0));
  row.stats = pg::field_bytes(result->get(), 0, 1);
  return std::optional<AggregateRow>(std::move(row));
}

Fallible PostgresConnection::upsert_aggregate(AggregateTable table, const AggregateRow& row) {
  if (auto ok = usable(); !ok) return ok;
  auto result = session_->run(
      table == AggregateTable::kBucket ? pg::sql::kUpsertAggregate : pg::sql::kUpsertDayAggregate,
      Params()
          .int64(row.metric_id)
          .int64(row.bucket_start)
          .int64(row.node_id)
          .int64(static_cast<int64_t>(row.reports))
          .text(row.stats));
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
