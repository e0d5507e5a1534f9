// The storage backends' Connection semantics (store/backend.h), one suite
// run over every backend: SQLite on a temporary file, PostgreSQL on the
// ctest fixture's server (a private schema per test). PostgreSQL cases FAIL,
// never skip, when that server is missing.
#include "store/backend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "backend_test_support.h"

namespace {

using namespace blur::collector;
using namespace blur::collector::store;
using blur_test::BackendTest;
using blur_test::report;

constexpr uint64_t kHigh = 0x8000000000000000ull;  // nonces are random 64-bit values

std::vector<std::pair<uint32_t, std::string>> sorted(
    std::vector<std::pair<uint32_t, std::string>> metrics) {
  std::sort(metrics.begin(), metrics.end());
  return metrics;
}

TEST_P(BackendTest, SchemaCreationIsIdempotentAndKeepsData) {
  auto c = connect();
  ASSERT_OK(c->ensure_schema());
  ASSERT_TRUE(VALUE(c->insert_metric(7, "rr eps=1")));
  ASSERT_OK(c->ensure_schema());
  auto other = connect();
  ASSERT_OK(other->ensure_schema());
  auto metrics = other->load_metrics();
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics.value(), (std::vector<std::pair<uint32_t, std::string>>{{7, "rr eps=1"}}));
}

TEST_P(BackendTest, RefusesANewerSchemaVersion) {
  ASSERT_TRUE(connect()->ensure_schema());
  std::string error;
  ASSERT_TRUE(backend().set_schema_version(kSchemaVersion + 1, &error)) << error;
  auto c = connect();
  auto checked = c->ensure_schema();
  ASSERT_FALSE(checked);
  EXPECT_EQ(checked.error().kind, Error::Kind::kInvalid);
  // Both versions named, and what to do.
  for (const std::string& part :
       {"version " + std::to_string(kSchemaVersion + 1),
        "newer than this collector's (" + std::to_string(kSchemaVersion) + ")",
        std::string("upgrade the collector")}) {
    EXPECT_NE(checked.error().message.find(part), std::string::npos) << checked.error().message;
  }
}

TEST_P(BackendTest, MetricsInsertOnceAndLoad) {
  auto c = connect_with_schema();
  EXPECT_TRUE(VALUE(c->load_metrics()).empty());
  EXPECT_TRUE(VALUE(c->insert_metric(2, "second")));
  EXPECT_TRUE(VALUE(c->insert_metric(0xffffffffu, "largest id")));
  EXPECT_TRUE(VALUE(c->insert_metric(1, "first")));
  auto again = c->insert_metric(1, "different");
  ASSERT_TRUE(again);
  EXPECT_FALSE(again.value());
  EXPECT_EQ(sorted(VALUE(c->load_metrics())),
            (std::vector<std::pair<uint32_t, std::string>>{
                {1, "first"}, {2, "second"}, {0xffffffffu, "largest id"}}));
}

TEST_P(BackendTest, InsertReportsSkipsExistingKeysAndDuplicatesWithinACall) {
  auto c = connect_with_schema();
  const ReportRow a = report(1, 1, 1, 60, "a"), b = report(1, 2, 1, 60, "b"),
                  d = report(kHigh + 9, 1, 1, 120, "d");
  auto first = c->insert_reports({a, b});
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first.value(), (std::vector<bool>{true, true}));

  ReportRow b_again = b, d_again = d;
  b_again.payload = "changed";
  d_again.payload = "second copy";
  auto second = c->insert_reports({b_again, d, a, d_again});
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(second.value(), (std::vector<bool>{false, true, false, false}));

  auto found = c->find_reports({{1, 2}, {kHigh + 9, 1}});
  ASSERT_TRUE(found);
  ASSERT_TRUE(found.value()[0] && found.value()[1]);
  EXPECT_EQ(found.value()[0]->payload, "b");  // the stored row was not replaced
  EXPECT_EQ(found.value()[1]->payload, "d");  // the first of the call's copies won
  EXPECT_EQ(VALUE(c->count_reports(std::nullopt)), 3u);
  EXPECT_TRUE(VALUE(c->insert_reports({})).empty());
}

TEST_P(BackendTest, ReportsRoundTripEveryFieldIncludingValuesAbove2To63) {
  auto c = connect_with_schema();
  ReportRow row;
  row.device_nonce = ~0ull;
  row.report_id = kHigh;
  row.metric_id = 0xfffffffeu;
  row.epsilon_micros = 0xffffffffu;
  row.device_minute = 0x80000001u;
  row.bucket_start = int64_t{1} << 40;
  row.received_at = (int64_t{1} << 40) + 59;
  row.time_source = TimeSource::kDevice;
  row.sdk_version = 0xfffffff0u;
  row.payload = std::string("\0\x80\xff\x01", 4);
  ReportRow small = report(0, 0, 3, 0, "");
  ASSERT_OK(c->insert_reports({row, small}));
  auto found = c->find_reports({{0, 1}, {~0ull, kHigh}, {0, 0}});
  ASSERT_TRUE(found) << found.error().message;
  ASSERT_EQ(found.value().size(), 3u);
  EXPECT_FALSE(found.value()[0]);
  ASSERT_TRUE(found.value()[1]);
  EXPECT_EQ(*found.value()[1], row);
  ASSERT_TRUE(found.value()[2]);
  EXPECT_EQ(*found.value()[2], small);

  std::vector<ReportRow> scanned;
  ASSERT_OK(c->scan_reports(row.metric_id, 0, row.bucket_start + 1, [&](const ReportRow& r) {
    scanned.push_back(r);
    return true;
  }));
  ASSERT_EQ(scanned.size(), 1u);
  EXPECT_EQ(scanned[0], row);
}

TEST_P(BackendTest, FindAndDelete) {
  auto c = connect_with_schema();
  ASSERT_OK(c->insert_reports({report(5, 1, 1, 0, "x"), report(5, 2, 1, 0, "y"),
                                 report(kHigh, 1, 1, 0, "z")}));
  ASSERT_OK(c->delete_reports({{5, 1}, {6, 6}, {kHigh, 1}}));
  auto found = c->find_reports({{5, 1}, {5, 2}, {kHigh, 1}, {5, 2}});
  ASSERT_TRUE(found);
  EXPECT_FALSE(found.value()[0]);
  ASSERT_TRUE(found.value()[1]);
  EXPECT_EQ(found.value()[1]->payload, "y");
  EXPECT_FALSE(found.value()[2]);
  ASSERT_TRUE(found.value()[3]);  // a key asked twice is answered twice
  EXPECT_EQ(found.value()[3]->payload, "y");
  EXPECT_EQ(VALUE(c->count_reports(std::nullopt)), 1u);
  EXPECT_OK(c->delete_reports({}));
  EXPECT_TRUE(VALUE(c->find_reports({})).empty());
}

TEST_P(BackendTest, ScanReturnsTheMetricsBucketRangeInBucketOrder) {
  auto c = connect_with_schema();
  // 10,000 rows of metric 1 in 100 buckets, inserted out of order, more than
  // one chunk of a cursor; metric 2 in the same buckets. One transaction, as
  // the store writes (SQLite commits each row on its own outside one).
  ASSERT_OK(c->begin());
  std::vector<ReportRow> rows;
  for (uint64_t i = 0; i < 10000; ++i) {
    const int64_t bucket = static_cast<int64_t>((i * 37) % 100) * 60;
    // 1,000 device nonces: PostgreSQL's insert holds an advisory lock per
    // nonce until the commit, and a store transaction never has more than
    // group commit's 1,024 devices.
    rows.push_back(report(kHigh + i % 1000, i, 1, bucket, std::to_string(i)));
    if (i % 10 == 0) rows.push_back(report(i, 0, 2, bucket, "other"));
    if (rows.size() >= 1000) {
      ASSERT_OK(c->insert_reports(rows));
      rows.clear();
    }
  }
  ASSERT_OK(c->insert_reports(rows));
  ASSERT_OK(c->commit());

  std::vector<int64_t> buckets;
  ASSERT_OK(c->scan_reports(1, 600, 3000, [&](const ReportRow& r) {
    EXPECT_EQ(r.metric_id, 1u);
    EXPECT_EQ(r.payload, std::to_string(r.report_id));
    buckets.push_back(r.bucket_start);
    return true;
  }));
  EXPECT_EQ(buckets.size(), 40u * 100u);
  EXPECT_TRUE(std::is_sorted(buckets.begin(), buckets.end()));
  EXPECT_EQ(buckets.front(), 600);
  EXPECT_EQ(buckets.back(), 2940);

  int visited = 0;
  ASSERT_OK(c->scan_reports(1, 0, 6000, [&](const ReportRow&) { return ++visited < 3; }));
  EXPECT_EQ(visited, 3);
  visited = 0;
  ASSERT_OK(c->scan_reports(3, 0, 6000, [&](const ReportRow&) { return ++visited, true; }));
  EXPECT_EQ(visited, 0);
  // The connection is still good for anything after a stopped scan.
  EXPECT_EQ(VALUE(c->count_reports(2)), 1000u);
}

TEST_P(BackendTest, ScanInsideATransactionSeesItsOwnRows) {
  auto c = connect_with_schema();
  ASSERT_OK(c->begin());
  ASSERT_OK(c->insert_reports({report(1, 1, 4, 60, "mine")}));
  int seen = 0;
  ASSERT_OK(c->scan_reports(4, 0, 120, [&](const ReportRow&) { return ++seen, true; }));
  EXPECT_EQ(seen, 1);
  ASSERT_OK(c->insert_reports({report(1, 2, 4, 60, "after the scan")}));
  ASSERT_OK(c->commit());
  EXPECT_EQ(VALUE(c->count_reports(4)), 2u);
}

TEST_P(BackendTest, DeleteReportsBeforeCountsWhatItDeleted) {
  auto c = connect_with_schema();
  std::vector<ReportRow> rows;
  for (uint64_t i = 0; i < 10; ++i) rows.push_back(report(i, 0, 1, static_cast<int64_t>(i) * 60, ""));
  for (uint64_t i = 0; i < 4; ++i) rows.push_back(report(i, 1, 2, 0, ""));
  ASSERT_OK(c->insert_reports(rows));
  EXPECT_EQ(VALUE(c->delete_reports_before(1, 240)), 4u);  // buckets 0, 60, 120, 180
  EXPECT_EQ(VALUE(c->delete_reports_before(1, 240)), 0u);
  EXPECT_EQ(VALUE(c->count_reports(1)), 6u);
  EXPECT_EQ(VALUE(c->count_reports(2)), 4u);  // another metric's old rows stay
  EXPECT_EQ(VALUE(c->count_reports(std::nullopt)), 10u);
  EXPECT_EQ(VALUE(c->count_reports(99)), 0u);
}

TEST_P(BackendTest, AggregatesUpsertPerNodeAndLoadAcrossNodes) {
  auto c = connect_with_schema();
  auto n1 = c->register_node("collector a");
  auto n2 = c->register_node("collector b");
  ASSERT_TRUE(n1 && n2);
  EXPECT_FALSE(VALUE(c->load_node_aggregates(AggregateTable::kBucket, n1.value(), {{1, 0}}))[0]);

  ASSERT_OK(c->upsert_aggregates(AggregateTable::kBucket, {{1, 60, n1.value(), 5, "five"}}));
  // Several rows in one statement, one of them replacing a stored one.
  ASSERT_OK(c->upsert_aggregates(AggregateTable::kBucket,
                                 {{1, 60, n1.value(), kHigh + 3, std::string("\0s", 2)},
                                  {1, 60, n2.value(), 2, "two"},
                                  {1, 0, n2.value(), 1, "early"}}));
  ASSERT_OK(c->upsert_aggregates(AggregateTable::kBucket, {{1, 120, n1.value(), 1, "late"}}));
  ASSERT_OK(
      c->upsert_aggregates(AggregateTable::kBucket, {{2, 60, n1.value(), 9, "other metric"}}));
  ASSERT_OK(c->upsert_aggregates(AggregateTable::kBucket, {}));

  // The node's rows in key order, absent keys as nullopt.
  auto mine = c->load_node_aggregates(AggregateTable::kBucket, n1.value(),
                                      {{2, 60}, {1, 0}, {1, 60}, {1, 120}});
  ASSERT_TRUE(mine);
  ASSERT_EQ(mine.value().size(), 4u);
  ASSERT_TRUE(mine.value()[0] && mine.value()[2] && mine.value()[3]);
  EXPECT_FALSE(mine.value()[1]);  // node 2's row, not node 1's
  EXPECT_EQ(mine.value()[0]->stats, "other metric");
  EXPECT_EQ(mine.value()[2]->reports, kHigh + 3);
  EXPECT_EQ(mine.value()[2]->stats, std::string("\0s", 2));
  EXPECT_EQ(mine.value()[2]->node_id, n1.value());
  EXPECT_EQ(mine.value()[2]->metric_id, 1u);
  EXPECT_EQ(mine.value()[2]->bucket_start, 60);
  EXPECT_EQ(mine.value()[3]->stats, "late");
  EXPECT_FALSE(VALUE(c->load_node_aggregates(AggregateTable::kBucket, n2.value() + 100,
                                             {{1, 60}}))[0]);
  EXPECT_TRUE(VALUE(c->load_node_aggregates(AggregateTable::kBucket, n1.value(), {})).empty());

  auto range = c->load_aggregates(1, 0, 120);
  ASSERT_TRUE(range);
  ASSERT_EQ(range.value().size(), 3u);
  EXPECT_EQ(range.value()[0].bucket_start, 0);
  EXPECT_EQ(range.value()[0].stats, "early");
  EXPECT_EQ(range.value()[1].bucket_start, 60);
  EXPECT_EQ(range.value()[2].bucket_start, 60);
  EXPECT_NE(range.value()[1].node_id, range.value()[2].node_id);
  for (const AggregateRow& row : range.value()) EXPECT_EQ(row.metric_id, 1u);

  // A range deletes only its buckets, every node's rows of them.
  ASSERT_OK(c->delete_aggregates(1, 60, 120));
  auto left = VALUE(c->load_aggregates(1, 0, 1000));
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0].stats, "early");
  EXPECT_EQ(left[1].stats, "late");
  ASSERT_OK(c->delete_aggregates(1, INT64_MIN, INT64_MAX));
  EXPECT_TRUE(VALUE(c->load_aggregates(1, 0, 1000)).empty());
  EXPECT_EQ(VALUE(c->load_aggregates(2, 0, 1000)).size(), 1u);
}

TEST_P(BackendTest, RollbackLeavesNothingAndCommitIsSeenByOthers) {
  auto c = connect_with_schema();
  auto other = connect();
  // Outside the transaction, as writers do: a partition created inside it
  // would lock `reports` for the other session until the rollback.
  ASSERT_OK(c->prepare_report_partitions({0}));
  ASSERT_OK(c->begin());
  ASSERT_TRUE(VALUE(c->insert_metric(1, "m")));
  ASSERT_OK(c->insert_reports({report(1, 1, 1, 0, "r")}));
  ASSERT_OK(c->upsert_aggregates(AggregateTable::kBucket, {{1, 0, 1, 1, "s"}}));
  EXPECT_EQ(VALUE(c->count_reports(std::nullopt)), 1u);
  EXPECT_EQ(VALUE(other->count_reports(std::nullopt)), 0u);  // not yet committed
  c->rollback();
  EXPECT_EQ(VALUE(c->count_reports(std::nullopt)), 0u);
  EXPECT_TRUE(VALUE(c->load_metrics()).empty());
  EXPECT_TRUE(VALUE(c->load_aggregates(1, 0, 60)).empty());

  ASSERT_OK(c->begin());
  ASSERT_OK(c->insert_reports({report(1, 1, 1, 0, "r")}));
  ASSERT_OK(c->commit());
  EXPECT_EQ(VALUE(other->count_reports(std::nullopt)), 1u);
  c->rollback();  // harmless without a transaction
  EXPECT_EQ(VALUE(other->count_reports(std::nullopt)), 1u);
}

// Devices: a nonce inserts once (with every field, and nonces above 2^63);
// a lazy transaction rolls back like any other and its commit is seen by
// other sessions; has_reports probes the reports' key.
TEST_P(BackendTest, DevicesInsertOnceAndLazyTransactionsCommitOrRollBack) {
  auto c = connect_with_schema();
  auto other = connect();
  DeviceRow row;
  row.device_nonce = kHigh + 5;
  row.enrolled_at = 1795000000;
  row.key_sha256.fill(0xa5);
  row.key_sha256[31] = 0;
  row.last_renewed_at = 1795000000;
  ASSERT_OK(c->begin_lazy());
  EXPECT_TRUE(VALUE(c->insert_device(row)));
  c->rollback();
  EXPECT_FALSE(VALUE(other->find_device(row.device_nonce)));

  ASSERT_OK(c->begin_lazy());
  EXPECT_TRUE(VALUE(c->insert_device(row)));
  DeviceRow again = row;
  again.key_sha256.fill(1);
  EXPECT_FALSE(VALUE(c->insert_device(again)));  // the nonce is taken: nothing written
  ASSERT_OK(c->commit());
  const auto found = VALUE(other->find_device(row.device_nonce));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->device_nonce, row.device_nonce);
  EXPECT_EQ(found->enrolled_at, row.enrolled_at);
  EXPECT_EQ(found->key_sha256, row.key_sha256);
  EXPECT_EQ(found->last_renewed_at, row.last_renewed_at);
  ASSERT_OK(c->set_device_renewed(row.device_nonce, row.enrolled_at + 7));
  EXPECT_EQ(VALUE(other->find_device(row.device_nonce))->last_renewed_at, row.enrolled_at + 7);
  EXPECT_EQ(VALUE(other->count_devices_enrolled_since(row.enrolled_at)), 1u);
  EXPECT_EQ(VALUE(other->count_devices_enrolled_since(row.enrolled_at + 1)), 0u);

  // Ordinary transactions go on after a lazy one.
  ASSERT_OK(c->begin());
  ASSERT_OK(c->insert_reports({report(kHigh + 5, 1, 1, 0, "r")}));
  ASSERT_OK(c->commit());
  EXPECT_TRUE(VALUE(other->has_reports(kHigh + 5)));
  EXPECT_FALSE(VALUE(other->has_reports(kHigh + 6)));
}

TEST_P(BackendTest, RegisterNodeGivesDistinctIds) {
  auto c = connect_with_schema();
  auto other = connect();
  std::vector<int64_t> ids;
  for (int i = 0; i < 3; ++i) {
    ids.push_back(VALUE(c->register_node("a")));
    ids.push_back(VALUE(other->register_node("b")));
  }
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(std::unique(ids.begin(), ids.end()), ids.end());
}

TEST_P(BackendTest, PingAnswersOnceTheSchemaExists) {
  auto c = connect();
  EXPECT_FALSE(c->ping());  // reads a table of ours, not just the engine
  ASSERT_OK(c->ensure_schema());
  EXPECT_OK(c->ping());
}

TEST_P(BackendTest, ProbeWriteCommitsAndChangesNothing) {
  auto c = connect_with_schema();
  ASSERT_OK(c->begin());
  ASSERT_OK(c->probe_write());
  ASSERT_OK(c->commit());
  EXPECT_EQ(VALUE(c->count_reports(std::nullopt)), 0u);
  EXPECT_TRUE(VALUE(c->load_metrics()).empty());
}

TEST_P(BackendTest, SizeGrowsWithCommittedReports) {
  auto c = connect_with_schema();
  const uint64_t before = VALUE(c->size_bytes());
  EXPECT_GT(before, 0u);
  // 2 MB of incompressible payloads (PostgreSQL would compress repeated bytes).
  std::vector<ReportRow> rows;
  uint64_t state = 88172645463325252ull;
  for (uint64_t i = 0; i < 2000; ++i) {
    std::string payload(1000, '\0');
    for (char& byte : payload) {
      state ^= state << 13, state ^= state >> 7, state ^= state << 17;  // xorshift64
      byte = static_cast<char>(state);
    }
    rows.push_back(report(i, i, 1, 0, payload));
  }
  ASSERT_OK(c->begin());
  ASSERT_OK(c->insert_reports(rows));
  ASSERT_OK(c->commit());
  EXPECT_GE(VALUE(c->size_bytes()), before + 2000u * 1000u);
}

// The bounds' two count tables (report_counts per bucket, receive_counts
// per day of arrival): the same operations, independent counts, each
// returning its totals in the order of the changes, pruned on its own.
TEST_P(BackendTest, CountTablesAreIndependent) {
  auto c = connect_with_schema();
  const int64_t day = 86400;
  ASSERT_OK(c->begin());
  auto buckets = c->add_device_counts(CountTable::kBucket,
                                      {{1, 0, 7, 3}, {1, 3600, 7, 2}, {1, day, kHigh + 1, 4}});
  ASSERT_TRUE(buckets) << buckets.error().message;
  EXPECT_EQ(buckets.value(), (std::vector<uint64_t>{3, 2, 4}));
  auto days = c->add_device_counts(CountTable::kReceiveDay, {{1, 0, 7, 5}, {1, day, kHigh + 1, 1}});
  ASSERT_TRUE(days) << days.error().message;
  EXPECT_EQ(days.value(), (std::vector<uint64_t>{5, 1}));
  // Adding again returns the totals; a negative delta takes back.
  EXPECT_EQ(VALUE(c->add_device_counts(CountTable::kReceiveDay, {{1, 0, 7, -2}, {2, 0, 7, 6}})),
            (std::vector<uint64_t>{3, 6}));
  ASSERT_OK(c->commit());
  EXPECT_EQ(VALUE(c->device_count(CountTable::kBucket, 1, 0, 7)), 3u);
  EXPECT_EQ(VALUE(c->device_count(CountTable::kReceiveDay, 1, 0, 7)), 3u);
  EXPECT_EQ(VALUE(c->device_count(CountTable::kBucket, 1, 3600, 7)), 2u);
  EXPECT_EQ(VALUE(c->device_count(CountTable::kReceiveDay, 1, 3600, 7)), 0u);
  EXPECT_EQ(VALUE(c->device_count(CountTable::kReceiveDay, 1, day, kHigh + 1)), 1u);
  EXPECT_EQ(VALUE(c->device_count(CountTable::kReceiveDay, 2, 0, 7)), 6u);
  // device_count_sums reads the buckets' counts only.
  auto sums = c->device_count_sums(1, 0, 2 * day, 0);
  ASSERT_TRUE(sums && sums->size() == 1u);
  EXPECT_EQ(sums->front().counts.reports, 9u);

  ASSERT_OK(c->delete_device_counts_before(CountTable::kReceiveDay, 1, day));
  EXPECT_EQ(VALUE(c->device_count(CountTable::kReceiveDay, 1, 0, 7)), 0u);
  EXPECT_EQ(VALUE(c->device_count(CountTable::kReceiveDay, 1, day, kHigh + 1)), 1u);
  EXPECT_EQ(VALUE(c->device_count(CountTable::kReceiveDay, 2, 0, 7)), 6u);  // another metric
  EXPECT_EQ(VALUE(c->device_count(CountTable::kBucket, 1, 0, 7)), 3u);      // the other table
  ASSERT_OK(c->delete_device_counts_before(CountTable::kBucket, 1, day));
  EXPECT_EQ(VALUE(c->device_count(CountTable::kBucket, 1, 3600, 7)), 0u);
  EXPECT_EQ(VALUE(c->device_count(CountTable::kBucket, 1, day, kHigh + 1)), 4u);
}

// Every operation on one session, in any order: each statement is its own
// (PostgreSQL prepares them per session by id; two statements sharing an id
// would run each other's SQL).
TEST_P(BackendTest, EveryOperationOnOneSession) {
  auto c = connect_with_schema();
  ASSERT_OK(c->ping());
  ASSERT_OK(c->size_bytes());
  ASSERT_OK(c->begin());
  ASSERT_TRUE(VALUE(c->insert_metric(1, "m")));
  const int64_t node = VALUE(c->register_node("n"));
  ASSERT_OK(c->insert_reports({report(1, 1, 1, 0, "r")}));
  ASSERT_OK(c->find_reports({{1, 1}}));
  for (const CountTable table : {CountTable::kBucket, CountTable::kReceiveDay}) {
    EXPECT_EQ(VALUE(c->add_device_counts(table, {{1, 0, 1, 1}})), (std::vector<uint64_t>{1}));
    EXPECT_EQ(VALUE(c->device_count(table, 1, 0, 1)), 1u);
    ASSERT_OK(c->delete_device_counts_before(table, 1, -1));
  }
  ASSERT_OK(c->device_count_sums(1, 0, 60, 0));
  ASSERT_OK(c->upsert_aggregates(AggregateTable::kBucket, {{1, 0, node, 1, "s"}}));
  ASSERT_OK(c->load_node_aggregates(AggregateTable::kBucket, node, {{1, 0}}));
  ASSERT_OK(c->load_aggregates(1, 0, 60));
  ASSERT_OK(c->count_reports(1));
  ASSERT_OK(c->count_reports(std::nullopt));
  ASSERT_OK(c->load_metrics());
  ASSERT_OK(c->delete_reports_before(1, -1));
  ASSERT_OK(c->delete_reports({{1, 1}}));
  ASSERT_OK(c->delete_aggregates(1, INT64_MIN, INT64_MAX));
  ASSERT_OK(c->probe_write());
  ASSERT_TRUE(VALUE(c->insert_device({7, 1, {}, 1})));
  ASSERT_TRUE(VALUE(c->find_device(7)));
  ASSERT_OK(c->set_device_renewed(7, 2));
  ASSERT_OK(c->has_reports(7));
  EXPECT_EQ(VALUE(c->count_devices_enrolled_since(0)), 1u);
  ASSERT_OK(c->commit());
  ASSERT_OK(c->ping());
  ASSERT_OK(c->size_bytes());
}

INSTANTIATE_TEST_SUITE_P(Backends, BackendTest, testing::ValuesIn(blur_test::backend_names()),
                         [](const testing::TestParamInfo<std::string>& param) {
                           return param.param;
                         });

}  // namespace
