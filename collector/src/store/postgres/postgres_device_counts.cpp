// The contribution bound's counts on PostgreSQL (report_counts and
// receive_counts, the same statements on each): a group's changes travel
// as four binary arrays in one upsert.
#include <algorithm>
#include <tuple>
#include <utility>

#include "store/postgres/pg_session.h"
#include "store/postgres/postgres_backend.h"
#include "store/postgres/postgres_sql.h"

namespace blur::collector::store {
namespace {

using pg::ArrayWriter;
using pg::Params;
using CountKey = std::tuple<int64_t, int64_t, int64_t>;  // as stored: metric, period, nonce bits

CountKey key_of(const DeviceCountChange& change) {
  return {change.metric_id, change.period_start, static_cast<int64_t>(change.device_nonce)};
}

const pg::Statement& add_statement(CountTable table) {
  return table == CountTable::kBucket ? pg::sql::kAddDeviceCounts : pg::sql::kAddReceiveCounts;
}
const pg::Statement& count_statement(CountTable table) {
  return table == CountTable::kBucket ? pg::sql::kDeviceCount : pg::sql::kReceiveCount;
}
const pg::Statement& prune_statement(CountTable table) {
  return table == CountTable::kBucket ? pg::sql::kDeleteDeviceCountsBefore
                                      : pg::sql::kDeleteReceiveCountsBefore;
}

}  // namespace

Outcome<std::vector<uint64_t>> PostgresConnection::add_device_counts(
    CountTable table, const std::vector<DeviceCountChange>& changes) {
  std::vector<uint64_t> totals(changes.size(), 0);
  if (changes.empty()) return totals;
  if (auto ok = usable(); !ok) return ok.error();
  const size_t n = changes.size();
  ArrayWriter metric(pg::kInt8Oid, n), period(pg::kInt8Oid, n), nonce(pg::kInt8Oid, n),
      delta(pg::kInt8Oid, n);
  for (const DeviceCountChange& change : changes) {
    metric.add_int64(change.metric_id);
    period.add_int64(change.period_start);
    nonce.add_int64(static_cast<int64_t>(change.device_nonce));
    delta.add_int64(change.delta);
  }
  auto result =
      session_->run(add_statement(table),
                    std::move(Params().array(metric).array(period).array(nonce).array(delta)));
  if (!result) return result.error();
  // RETURNING's order is the server's: match the rows by key.
  std::vector<std::pair<CountKey, uint64_t>> returned;
  for (int row = 0; row < pg::rows(result->get()); ++row) {
    returned.emplace_back(
        CountKey{pg::field_int64(result->get(), row, 0), pg::field_int64(result->get(), row, 1),
                 pg::field_int64(result->get(), row, 2)},
        static_cast<uint64_t>(pg::field_int64(result->get(), row, 3)));
  }
  std::sort(returned.begin(), returned.end());
  for (size_t i = 0; i < n; ++i) {
    const CountKey key = key_of(changes[i]);
    const auto at =
        std::lower_bound(returned.begin(), returned.end(), std::make_pair(key, uint64_t{0}));
    if (at == returned.end() || at->first != key) {
      return unavailable("the database did not return the count of a device it updated");
    }
    totals[i] = at->second;
  }
  return totals;
}

Outcome<uint64_t> PostgresConnection::device_count(CountTable table, uint32_t metric_id,
                                                   int64_t period_start, uint64_t device_nonce) {
  if (auto ok = usable(); !ok) return ok.error();
  auto result = session_->run(
      count_statement(table),
      Params().int64(metric_id).int64(period_start).int64(static_cast<int64_t>(device_nonce)));
  if (!result) return result.error();
  if (pg::rows(result->get()) == 0) return uint64_t{0};
  return static_cast<uint64_t>(pg::field_int64(result->get(), 0, 0));
}

Outcome<std::vector<PeriodDeviceCounts>> PostgresConnection::device_count_sums(
    uint32_t metric_id, int64_t from, int64_t to, int64_t period_seconds) {
  if (auto ok = usable(); !ok) return ok.error();
  auto result =
      session_->run(pg::sql::kDeviceCountSums,
                    Params().int64(metric_id).int64(from).int64(to).int64(period_seconds));
  if (!result) return result.error();
  std::vector<PeriodDeviceCounts> periods;
  for (int row = 0; row < pg::rows(result->get()); ++row) {
    PeriodDeviceCounts p;
    p.period_start = pg::field_int64(result->get(), row, 0);
    p.counts.devices = static_cast<uint64_t>(pg::field_int64(result->get(), row, 1));
    p.counts.reports = static_cast<uint64_t>(pg::field_int64(result->get(), row, 2));
    p.counts.sum_squares = pg::field_float8(result->get(), row, 3);
    p.counts.max_reports = static_cast<uint64_t>(pg::field_int64(result->get(), row, 4));
    periods.push_back(p);
  }
  return periods;
}

Fallible PostgresConnection::delete_device_counts_before(CountTable table, uint32_t metric_id,
                                                         int64_t before) {
  if (auto ok = usable(); !ok) return ok;
  auto result = session_->run(prune_statement(table), Params().int64(metric_id).int64(before));
  if (!result) return result.error();
  return done();
}

}  // namespace blur::collector::store
