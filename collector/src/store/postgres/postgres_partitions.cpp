// PostgreSQL's daily partitions of raw reports, the locks that let writers,
// rebuilds and partition drops run side by side, and retired metrics
// (schema 4).
#include <libpq-fe.h>

#include <algorithm>
#include <string>
#include <utility>

#include "store/postgres/pg_session.h"
#include "store/postgres/postgres_backend.h"
#include "store/postgres/postgres_sql.h"

namespace blur::collector::store {
namespace {

using pg::ArrayWriter;
using pg::Params;

constexpr int64_t kDay = 86400;

int64_t day_of(int64_t t) { return t - ((t % kDay) + kDay) % kDay; }

Params int64_array(const std::vector<int64_t>& values) {
  ArrayWriter array(pg::kInt8Oid, values.size());
  for (int64_t v : values) array.add_int64(v);
  return std::move(Params().array(array));
}

// A partition name from the catalog (reports_YYYYMMDD), quoted for DDL.
std::string quoted(const std::string& name) { return "\"" + name + "\""; }

}  // namespace

// ---- schema 3 -> 4 -----------------------------------------------------------

Fallible PostgresConnection::upgrade_3_to_4_retired_metrics() {
  auto upgraded = session_->exec(pg::sql::kUpgrade3To4RetiredMetrics);
  if (!upgraded) return upgraded.error();
  return done();
}

Fallible PostgresConnection::upgrade_3_to_4_report_partitions() {
  auto partitioned = session_->exec(pg::sql::kReportsPartitioned);
  if (!partitioned) return partitioned.error();
  if (pg::rows(partitioned->get()) == 1 && pg::field_bytes(partitioned->get(), 0, 0) == "t") {
    return done();
  }
  auto moved = session_->exec(pg::sql::kUpgrade3To4ReportPartitions);
  if (!moved) return moved.error();
  return done();
}

// ---- partitions ----------------------------------------------------------------

Fallible PostgresConnection::prepare_report_partitions(const std::vector<int64_t>& bucket_starts) {
  if (in_transaction_) return invalid("partitions are prepared outside a transaction");
  if (auto ok = usable(); !ok) return ok;
  if (auto began = begin(); !began) return began;
  if (auto ensured = ensure_partitions(bucket_starts); !ensured) {
    rollback();
    return ensured;
  }
  return commit();
}

Fallible PostgresConnection::ensure_partitions(const std::vector<int64_t>& bucket_starts) {
  std::vector<int64_t> missing;
  for (const int64_t bucket_start : bucket_starts) {
    for (int64_t day : {day_of(bucket_start), day_of(bucket_start) + kDay}) {
      if (partition_days_.count(day) == 0) missing.push_back(day);
    }
  }
  if (missing.empty()) return done();
  // Another collector may have made them: read the catalog before creating.
  auto known = report_partition_days();
  if (!known) return known.error();
  partition_days_.insert(known->begin(), known->end());
  missing.erase(std::remove_if(missing.begin(), missing.end(),
                               [&](int64_t day) { return partition_days_.count(day) != 0; }),
                missing.end());
  if (missing.empty()) return done();
  std::sort(missing.begin(), missing.end());
  missing.erase(std::unique(missing.begin(), missing.end()), missing.end());
  if (auto locked = session_->exec(pg::sql::kSchemaLock); !locked) return locked.error();
  auto created = session_->run(pg::sql::kEnsurePartitions, int64_array(missing));
  if (!created) return created.error();
  partition_days_.insert(missing.begin(), missing.end());
  return done();
}

Outcome<std::vector<int64_t>> PostgresConnection::report_partition_days() {
  if (auto ok = usable(); !ok) return ok.error();
  auto result = session_->run(pg::sql::kReportPartitions, Params());
  if (!result) return result.error();
  std::vector<int64_t> days;
  for (int row = 0; row < pg::rows(result->get()); ++row) {
    days.push_back(pg::field_int64(result->get(), row, 1));
  }
  return days;
}

// DETACH ... CONCURRENTLY takes no lock that stops inserts into the other
// partitions (a plain DROP TABLE of a partition would lock the whole table
// until every transaction using it ends); it runs outside a transaction.
// One interrupted before finishing is finished (FINALIZE), and a table
// detached but not dropped is dropped, at the next call.
Outcome<std::vector<int64_t>> PostgresConnection::drop_report_partitions_before(int64_t before) {
  if (in_transaction_) return invalid("partitions are dropped outside a transaction");
  if (auto ok = usable(); !ok) return ok.error();
  auto listed = session_->run(pg::sql::kReportPartitions, Params());
  if (!listed) return listed.error();
  std::vector<int64_t> dropped;
  std::vector<std::string> names;
  for (int row = 0; row < pg::rows(listed->get()); ++row) {
    const int64_t day = pg::field_int64(listed->get(), row, 1);
    if (day + kDay > before) continue;
    const std::string name = pg::field_bytes(listed->get(), row, 0);
    const bool pending = pg::field_bytes(listed->get(), row, 2) == std::string(1, '\1');
    const std::string detach = "ALTER TABLE reports DETACH PARTITION " + quoted(name) +
                               (pending ? " FINALIZE" : " CONCURRENTLY");
    if (auto detached = session_->exec(detach.c_str()); !detached) return detached.error();
    names.push_back(name);
    dropped.push_back(day);
  }
  auto leftovers = session_->run(pg::sql::kDetachedPartitions, Params());
  if (!leftovers) return leftovers.error();
  for (int row = 0; row < pg::rows(leftovers->get()); ++row) {
    const std::string name = pg::field_bytes(leftovers->get(), row, 0);
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  for (const std::string& name : names) {
    if (auto gone = session_->exec(("DROP TABLE IF EXISTS " + quoted(name)).c_str()); !gone) {
      return gone.error();
    }
  }
  for (int64_t day : dropped) partition_days_.erase(day);
  return dropped;
}

// ---- locks ----------------------------------------------------------------------

Fallible PostgresConnection::lock_buckets(const std::vector<std::pair<uint32_t, int64_t>>& keys,
                                          bool exclusive) {
  if (keys.empty()) return done();
  if (auto ok = usable(); !ok) return ok;
  ArrayWriter metrics(pg::kInt8Oid, keys.size()), buckets(pg::kInt8Oid, keys.size());
  for (const auto& [metric, bucket] : keys) {
    metrics.add_int64(metric);
    buckets.add_int64(bucket);
  }
  auto locked = session_->run(
      exclusive ? pg::sql::kLockBucketsExclusive : pg::sql::kLockBucketsShared,
      Params().array(metrics).array(buckets));
  if (!locked) return locked.error();
  return done();
}

Outcome<std::vector<int64_t>> PostgresConnection::metric_buckets(uint32_t metric_id) {
  if (auto ok = usable(); !ok) return ok.error();
  auto result = session_->run(pg::sql::kMetricBuckets, Params().int64(metric_id));
  if (!result) return result.error();
  std::vector<int64_t> buckets;
  for (int row = 0; row < pg::rows(result->get()); ++row) {
    buckets.push_back(pg::field_int64(result->get(), row, 0));
  }
  return buckets;
}

// ---- retired metrics --------------------------------------------------------------

Outcome<std::vector<std::pair<uint32_t, int64_t>>> PostgresConnection::load_retired_metrics() {
  if (auto ok = usable(); !ok) return ok.error();
  auto result = session_->run(pg::sql::kLoadRetiredMetrics, Params());
  if (!result) return result.error();
  std::vector<std::pair<uint32_t, int64_t>> retired;
  for (int row = 0; row < pg::rows(result->get()); ++row) {
    retired.emplace_back(static_cast<uint32_t>(pg::field_int64(result->get(), row, 0)),
                         pg::field_int64(result->get(), row, 1));
  }
  return retired;
}

Outcome<int64_t> PostgresConnection::retire_metric(uint32_t metric_id, int64_t retired_at) {
  if (auto ok = usable(); !ok) return ok.error();
  auto result =
      session_->run(pg::sql::kRetireMetric, Params().int64(metric_id).int64(retired_at));
  if (!result) return result.error();
  return pg::field_int64(result->get(), 0, 0);
}

}  // namespace blur::collector::store
