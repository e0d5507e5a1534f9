// The report operations of PostgresConnection: batches travel as binary
// arrays in one statement each way, scans through a cursor.
#include <algorithm>
#include <numeric>
#include <utility>

#include "store/postgres/pg_session.h"
#include "store/postgres/postgres_backend.h"
#include "store/postgres/postgres_sql.h"

namespace blur::collector::store {
namespace {

using pg::ArrayWriter;
using pg::Params;
using Key = std::pair<uint64_t, uint64_t>;  // (device_nonce, report_id), unsigned order

Key key_of(const ReportRow& row) { return {row.device_nonce, row.report_id}; }

// The two key columns at (row, 0) and (row, 1) of a result.
Key result_key(const pg_result* result, int row) {
  return {static_cast<uint64_t>(pg::field_int64(result, row, 0)),
          static_cast<uint64_t>(pg::field_int64(result, row, 1))};
}

// A row in kReportColumns order.
ReportRow read_report(const pg_result* result, int row) {
  ReportRow report;
  report.device_nonce = static_cast<uint64_t>(pg::field_int64(result, row, 0));
  report.report_id = static_cast<uint64_t>(pg::field_int64(result, row, 1));
  report.metric_id = static_cast<uint32_t>(pg::field_int64(result, row, 2));
  report.epsilon_micros = static_cast<uint32_t>(pg::field_int64(result, row, 3));
  report.device_minute = static_cast<uint32_t>(pg::field_int64(result, row, 4));
  report.bucket_start = pg::field_int64(result, row, 5);
  report.received_at = pg::field_int64(result, row, 6);
  report.time_source = static_cast<TimeSource>(pg::field_int16(result, row, 7));
  report.sdk_version = static_cast<uint32_t>(pg::field_int64(result, row, 8));
  report.payload = pg::field_bytes(result, row, 9);
  return report;
}

Params key_arrays(const std::vector<ReportKey>& keys) {
  ArrayWriter nonces(pg::kInt8Oid, keys.size());
  ArrayWriter ids(pg::kInt8Oid, keys.size());
  for (const ReportKey& key : keys) {
    nonces.add_int64(static_cast<int64_t>(key.device_nonce));
    ids.add_int64(static_cast<int64_t>(key.report_id));
  }
  return std::move(Params().array(nonces).array(ids));
}

// Rows a cursor hands over per FETCH: a few MB at most for small payloads.
constexpr int kScanChunk = 4096;

}  // namespace

Outcome<std::vector<bool>> PostgresConnection::insert_reports(const std::vector<ReportRow>& rows,
                                                              int64_t duplicate_since) {
  std::vector<bool> inserted(rows.size(), false);
  if (rows.empty()) return inserted;
  if (auto ok = usable(); !ok) return ok.error();
  // The locks below last until the transaction ends: one of our own if the
  // caller has none.
  if (!in_transaction_) {
    std::vector<int64_t> buckets;
    for (const ReportRow& row : rows) buckets.push_back(row.bucket_start);
    if (auto prepared = prepare_report_partitions(buckets); !prepared) return prepared.error();
    if (auto began = begin(); !began) return began.error();
    auto result = insert_reports(rows, duplicate_since);
    if (!result) {
      rollback();
      return result;
    }
    if (auto committed = commit(); !committed) return committed.error();
    return result;
  }
  std::vector<int64_t> buckets;
  buckets.reserve(rows.size());
  for (const ReportRow& row : rows) buckets.push_back(row.bucket_start);
  if (auto ensured = ensure_partitions(buckets); !ensured) return ensured.error();

  // Send each key once, its first occurrence (a stable sort keeps the call's
  // order among equal keys), in key order: two collectors inserting
  // overlapping batches then take the keys' locks in the same order and
  // cannot deadlock on each other.
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return key_of(rows[a]) < key_of(rows[b]); });
  order.erase(std::unique(order.begin(), order.end(),
                          [&](size_t a, size_t b) { return key_of(rows[a]) == key_of(rows[b]); }),
              order.end());

  const size_t n = order.size();
  ArrayWriter nonce(pg::kInt8Oid, n), id(pg::kInt8Oid, n), metric(pg::kInt8Oid, n),
      epsilon(pg::kInt8Oid, n), minute(pg::kInt8Oid, n), bucket(pg::kInt8Oid, n),
      received(pg::kInt8Oid, n), source(pg::kInt2Oid, n), sdk(pg::kInt8Oid, n),
      payload(pg::kByteaOid, n);
  for (size_t i : order) {
    const ReportRow& row = rows[i];
    nonce.add_int64(static_cast<int64_t>(row.device_nonce));
    id.add_int64(static_cast<int64_t>(row.report_id));
    metric.add_int64(row.metric_id);
    epsilon.add_int64(row.epsilon_micros);
    minute.add_int64(row.device_minute);
    bucket.add_int64(row.bucket_start);
    received.add_int64(row.received_at);
    source.add_int16(static_cast<int16_t>(row.time_source));
    sdk.add_int64(row.sdk_version);
    payload.add_bytes(row.payload);
  }
  // The writers of these nonces take turns until the transaction ends: the
  // insert's NOT EXISTS then sees every committed row of each nonce.
  if (auto locked = session_->run(pg::sql::kLockDevices, Params().array(nonce)); !locked) {
    return locked.error();
  }
  Params params;
  params.array(nonce).array(id).array(metric).array(epsilon).array(minute).array(bucket);
  params.array(received).array(source).array(sdk).array(payload).int64(duplicate_since);
  auto result = session_->run(pg::sql::kInsertReports, params);
  if (!result) return result.error();

  // RETURNING lists the inserted keys; match them against the sent ones
  // (both in key order) without assuming the server kept our order.
  std::vector<Key> returned;
  returned.reserve(static_cast<size_t>(pg::rows(result->get())));
  for (int row = 0; row < pg::rows(result->get()); ++row) {
    returned.push_back(result_key(result->get(), row));
  }
  std::sort(returned.begin(), returned.end());
  size_t next = 0;
  for (size_t i : order) {
    const Key key = key_of(rows[i]);
    while (next < returned.size() && returned[next] < key) ++next;
    if (next < returned.size() && returned[next] == key) inserted[i] = true;
  }
  return inserted;
}

Outcome<std::vector<std::optional<ReportRow>>> PostgresConnection::find_reports(
    const std::vector<ReportKey>& keys) {
  std::vector<std::optional<ReportRow>> found(keys.size());
  if (keys.empty()) return found;
  if (auto ok = usable(); !ok) return ok.error();
  auto result = session_->run(pg::sql::kFindReports, key_arrays(keys));
  if (!result) return result.error();

  std::vector<std::pair<Key, int>> rows;  // (key, result row), sorted by key
  for (int row = 0; row < pg::rows(result->get()); ++row) {
    rows.emplace_back(result_key(result->get(), row), row);
  }
  std::sort(rows.begin(), rows.end());
  for (size_t i = 0; i < keys.size(); ++i) {
    const Key key{keys[i].device_nonce, keys[i].report_id};
    auto at = std::lower_bound(rows.begin(), rows.end(), std::make_pair(key, -1));
    if (at != rows.end() && at->first == key) found[i] = read_report(result->get(), at->second);
  }
  return found;
}

Fallible PostgresConnection::delete_reports(const std::vector<ReportKey>& keys) {
  if (keys.empty()) return done();
  if (auto ok = usable(); !ok) return ok;
  auto result = session_->run(pg::sql::kDeleteReports, key_arrays(keys));
  if (!result) return result.error();
  return done();
}

// A cursor lives in a transaction: the caller's, or one of our own.
Fallible PostgresConnection::scan_reports(uint32_t metric_id, int64_t from, int64_t to,
                                          const std::function<bool(const ReportRow&)>& visit) {
  if (auto ok = usable(); !ok) return ok;
  if (in_transaction_) return scan_in_transaction(metric_id, from, to, visit);
  if (auto began = session_->exec("BEGIN READ ONLY"); !began) return began.error();
  in_transaction_ = true;  // so that a lost connection is not silently reconnected
  auto scanned = scan_in_transaction(metric_id, from, to, visit);
  if (!scanned) {
    rollback();
    return scanned;
  }
  return commit();
}

Fallible PostgresConnection::scan_in_transaction(
    uint32_t metric_id, int64_t from, int64_t to,
    const std::function<bool(const ReportRow&)>& visit) {
  const std::string cursor = "blur_scan_" + std::to_string(++scans_);
  auto declared = session_->run_once(
      "declare scan",
      "DECLARE " + cursor + " NO SCROLL CURSOR FOR SELECT " + pg::sql::kReportColumns +
          " FROM reports WHERE metric_id = $1 AND bucket_start >= $2 AND bucket_start < $3"
          " ORDER BY bucket_start",
      Params().int64(metric_id).int64(from).int64(to));
  if (!declared) return declared.error();
  const std::string fetch = "FETCH " + std::to_string(kScanChunk) + " FROM " + cursor;
  for (;;) {
    auto chunk = session_->run_once("scan reports", fetch, Params());
    if (!chunk) return chunk.error();
    const int count = pg::rows(chunk->get());
    bool more = count == kScanChunk;
    for (int row = 0; row < count; ++row) {
      if (!visit(read_report(chunk->get(), row))) {
        more = false;
        break;
      }
    }
    if (!more) break;
  }
  auto closed = session_->exec(("CLOSE " + cursor).c_str());
  if (!closed) return closed.error();
  return done();
}

Outcome<uint64_t> PostgresConnection::delete_reports_before(uint32_t metric_id, int64_t before) {
  if (auto ok = usable(); !ok) return ok.error();
  auto result =
      session_->run(pg::sql::kDeleteReportsBefore, Params().int64(metric_id).int64(before));
  if (!result) return result.error();
  return pg::affected_rows(result->get());
}

Outcome<uint64_t> PostgresConnection::count_reports(std::optional<uint32_t> metric_id) {
  if (auto ok = usable(); !ok) return ok.error();
  auto result = metric_id ? session_->run(pg::sql::kCountMetricReports, Params().int64(*metric_id))
                          : session_->run(pg::sql::kCountReports, Params());
  if (!result) return result.error();
  return static_cast<uint64_t>(pg::field_int64(result->get(), 0, 0));
}

Fallible PostgresConnection::ping() {
  if (auto ok = usable(); !ok) return ok.error();
  auto result = session_->run(pg::sql::kPing, Params());
  if (!result) return result.error();
  return done();
}

Fallible PostgresConnection::probe_write() {
  if (auto ok = usable(); !ok) return ok.error();
  auto result = session_->run(pg::sql::kProbeWrite, Params());
  if (!result) return result.error();
  return done();
}

Outcome<uint64_t> PostgresConnection::size_bytes() {
  if (auto ok = usable(); !ok) return ok.error();
  auto result = session_->run(pg::sql::kStoreSize, Params());
  if (!result) return result.error();
  return static_cast<uint64_t>(pg::field_int64(result->get(), 0, 0));
}

}  // namespace blur::collector::store
