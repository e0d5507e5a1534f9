// The store's contract, one suite for every backend: SQLite, and PostgreSQL
// on the server the ctest fixture `postgres` starts (a schema per database).
#include "store/store.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "estimate/device_clustering.h"
#include "incoming_reports.h"
#include "mechanisms/mechanism_spec.h"
#include "postgres_test_db.h"
#include "random_reports.h"

namespace {

using namespace blur::collector;

// A fresh, empty database of one backend per test.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string fresh_url() = 0;
  // Runs SQL on the database, each "%." in it replaced by the qualifier of
  // its tables (PostgreSQL: the test's schema; SQLite: nothing).
  virtual void run(const std::string& url, const std::string& sql) = 0;
  // Sets the schema version row directly (to test the newer-version refusal).
  void set_schema_version(const std::string& url, int version) {
    run(url, "UPDATE %.blur_schema SET version = " + std::to_string(version));
  }
  // Turns a database back into schema version 1 (no report_counts, no
  // devices), as a collector before the contribution bound left it.
  void make_version_1(const std::string& url) {
    make_version_3(url);
    run(url, "DROP TABLE %.report_counts; " + kDropVersion3Tables +
                 "UPDATE %.blur_schema SET version = 1");
  }
  // ... into version 2 (no devices, no receive_counts), as a collector
  // before device keys and the receive-time allowance left it.
  void make_version_2(const std::string& url) {
    make_version_3(url);
    run(url, kDropVersion3Tables + "UPDATE %.blur_schema SET version = 2");
  }
  // ... into version 3 (no day_aggregates, no retired_metrics; on PostgreSQL
  // one unpartitioned reports table keyed by (device_nonce, report_id), its
  // rows kept), as a collector before day roll-ups, retirement and daily
  // partitions left it.
  void make_version_3(const std::string& url) {
    make_version_4(url);
    run(url, kDropVersion4Tables + version_3_reports() + "UPDATE %.blur_schema SET version = 3");
  }
  // ... into version 4 (the count tables keyed metric first, their rows
  // kept; SQLite: reports indexed by (metric, bucket)), as a collector
  // before schema 5 left it.
  void make_version_4(const std::string& url) {
    run(url, version_4_keys() + "UPDATE %.blur_schema SET version = 4");
  }
  // The columns of a count table's primary key, in order ("report_counts":
  // "bucket_start,device_nonce,metric_id").
  virtual std::string primary_key(const std::string& url, const std::string& table) = 0;

 protected:
  // The SQL that turns schema 4's reports table back into version 3's.
  virtual std::string version_3_reports() const = 0;
  // The SQL that keys schema 5's count tables as version 4 did.
  virtual std::string version_4_keys() const = 0;

 private:
  const std::string kDropVersion3Tables = "DROP TABLE %.devices; DROP TABLE %.receive_counts; ";
  const std::string kDropVersion4Tables =
      "DROP TABLE %.day_aggregates; DROP TABLE %.retired_metrics; ";
};

// "%." in `sql` replaced by `qualifier`.
std::string qualified(std::string sql, const std::string& qualifier) {
  for (size_t at = sql.find("%."); at != std::string::npos; at = sql.find("%.", at)) {
    sql.replace(at, 2, qualifier);
    at += qualifier.size();
  }
  return sql;
}

class SqliteBackend : public Backend {
 public:
  SqliteBackend() {
    char pattern[] = "/tmp/blur-store-test-XXXXXX";
    dir_ = mkdtemp(pattern);
  }
  ~SqliteBackend() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string fresh_url() override { return "sqlite:" + dir_ + "/db" + std::to_string(++n_); }
  void run(const std::string& url, const std::string& sql) override {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(url.substr(7).c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db, qualified(sql, "").c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
  }

 protected:
  std::string version_3_reports() const override { return ""; }  // one table in both
  std::string version_4_keys() const override {
    std::string sql;
    for (const char* table : {"report_counts", "receive_counts"}) {
      const std::string t = table, period = t == "report_counts" ? "bucket_start" : "day_start";
      sql += "ALTER TABLE " + t + " RENAME TO " + t + "_v5; CREATE TABLE " + t +
             " (metric_id INTEGER NOT NULL, " + period +
             " INTEGER NOT NULL, device_nonce INTEGER NOT NULL, reports INTEGER NOT NULL, "
             "PRIMARY KEY (metric_id, " + period + ", device_nonce)) WITHOUT ROWID; INSERT INTO " +
             t + " SELECT metric_id, " + period + ", device_nonce, reports FROM " + t +
             "_v5; DROP TABLE " + t + "_v5; ";
    }
    return sql +
           "ALTER TABLE reports RENAME TO reports_v5; DROP INDEX reports_by_bucket; "
           "DROP INDEX reports_by_key; CREATE TABLE reports (device_nonce INTEGER NOT NULL, "
           "report_id INTEGER NOT NULL, metric_id INTEGER NOT NULL, epsilon_micros INTEGER NOT "
           "NULL, device_minute INTEGER NOT NULL, bucket_start INTEGER NOT NULL, received_at "
           "INTEGER NOT NULL, time_source INTEGER NOT NULL, sdk_version INTEGER NOT NULL, "
           "payload BLOB NOT NULL, PRIMARY KEY (device_nonce, report_id)) WITHOUT ROWID; "
           "INSERT INTO reports SELECT * FROM reports_v5; DROP TABLE reports_v5; "
           "CREATE INDEX reports_by_bucket ON reports (metric_id, bucket_start); ";
  }
  std::string primary_key(const std::string& url, const std::string& table) override {
    sqlite3* db = nullptr;
    std::string columns;
    EXPECT_EQ(sqlite3_open(url.substr(7).c_str(), &db), SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    // pk: the column's position in the primary key (1-based), 0 if not in it.
    EXPECT_EQ(sqlite3_prepare_v2(db,
                                 ("SELECT name FROM pragma_table_info('" + table +
                                  "') WHERE pk > 0 ORDER BY pk")
                                     .c_str(),
                                 -1, &s, nullptr),
              SQLITE_OK);
    while (s && sqlite3_step(s) == SQLITE_ROW) {
      columns += (columns.empty() ? "" : ",") +
                 std::string(reinterpret_cast<const char*>(sqlite3_column_text(s, 0)));
    }
    sqlite3_finalize(s);
    sqlite3_close(db);
    return columns;
  }

 private:
  std::string dir_;
  int n_ = 0;
};

// Each fresh database is a new schema on the fixture's server; without the
// server, the test fails with the reason.
class PostgresBackend : public Backend {
 public:
  std::string fresh_url() override {
    schemas_.push_back(std::make_unique<blur_test::PostgresTestSchema>());
    EXPECT_TRUE(schemas_.back()->ok()) << schemas_.back()->error();
    return schemas_.back()->ok() ? schemas_.back()->url() : "postgresql:///unavailable";
  }
  void run(const std::string& url, const std::string& sql) override {
    for (auto& schema : schemas_) {
      if (schema->url() != url) continue;
      ASSERT_TRUE(schema->exec(qualified(sql, schema->schema() + "."))) << schema->error();
      return;
    }
    FAIL() << "no schema for " << url;
  }

 protected:
  // Version 3's reports table, as kCreateSchema wrote it then, with the rows.
  std::string version_3_reports() const override {
    return "ALTER TABLE %.reports RENAME TO reports_v4; "
           "CREATE TABLE %.reports (device_nonce BIGINT NOT NULL, report_id BIGINT NOT NULL, "
           "metric_id BIGINT NOT NULL, epsilon_micros BIGINT NOT NULL, device_minute BIGINT NOT "
           "NULL, bucket_start BIGINT NOT NULL, received_at BIGINT NOT NULL, time_source SMALLINT "
           "NOT NULL, sdk_version BIGINT NOT NULL, payload BYTEA NOT NULL, PRIMARY KEY "
           "(device_nonce, report_id)); "
           "INSERT INTO %.reports SELECT * FROM %.reports_v4; "
           "DROP TABLE %.reports_v4; "
           "CREATE INDEX reports_metric_bucket ON %.reports (metric_id, bucket_start); "
           "DROP FUNCTION %.blur_report_partition(BIGINT); ";
  }
  std::string version_4_keys() const override {
    std::string sql;
    for (const char* table : {"report_counts", "receive_counts"}) {
      const std::string t = table, period = t == "report_counts" ? "bucket_start" : "day_start";
      sql += "ALTER TABLE %." + t + " DROP CONSTRAINT " + t + "_pkey; ALTER TABLE %." + t +
             " ADD CONSTRAINT " + t + "_pkey PRIMARY KEY (metric_id, " + period +
             ", device_nonce); ";
    }
    return sql;
  }
  std::string primary_key(const std::string& url, const std::string& table) override {
    for (auto& schema : schemas_) {
      if (schema->url() != url) continue;
      // The key's columns in key order (indkey: the columns' numbers).
      return schema->query(
          "SELECT string_agg(a.attname, ',' ORDER BY k.position) FROM pg_index i "
          "CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, position) "
          "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum "
          "WHERE i.indisprimary AND i.indrelid = '" +
          schema->schema() + "." + table + "'::regclass");
    }
    ADD_FAILURE() << "no schema for " << url;
    return "";
  }

 private:
  std::vector<std::unique_ptr<blur_test::PostgresTestSchema>> schemas_;
};

std::unique_ptr<Backend> make_backend(const std::string& name) {
  if (name == "sqlite") return std::make_unique<SqliteBackend>();
  if (name == "postgresql") return std::make_unique<PostgresBackend>();
  return nullptr;
}

Batch batch_of(uint64_t nonce, std::initializer_list<std::pair<uint64_t, bool>> reports) {
  Batch batch;
  batch.sdk_version = 256;
  batch.device_nonce = nonce;
  for (const auto& [id, bit] : reports) batch.reports.push_back(blur_test::binary_report(id, bit));
  return batch;
}

const MetricConfig kMetric{1, MechanismId::kBinaryRandomizedResponse, 1000000, 2};
constexpr int64_t kNow = 1795000000;  // 2026-11-18T...Z

class StoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    backend_ = make_backend(GetParam());
    ASSERT_TRUE(backend_) << "no backend " << GetParam();
    url_ = backend_->fresh_url();
  }
  std::unique_ptr<Store> open(Store::Mode mode = Store::Mode::kReadWrite,
                              StoreOptions options = {}) {
    auto store = Store::open(url_, mode, options);
    EXPECT_TRUE(store) << store.error().message;
    return store ? std::move(store).value() : nullptr;
  }
  std::vector<BatchOutcome> insert(Store& store, std::vector<const Batch*> batches,
                                   int64_t received_at = kNow) {
    std::vector<ReceivedBatch> received;
    for (const Batch* b : batches) received.push_back({b, received_at});
    auto outcomes = store.insert(received);
    EXPECT_TRUE(outcomes) << outcomes.error().message;
    return outcomes ? outcomes.value() : std::vector<BatchOutcome>{};
  }
  uint64_t estimate_n(Store& store, const MetricConfig& metric, TimeRange range = {}) {
    auto aggregate = store.aggregate(metric, range);
    EXPECT_TRUE(aggregate) << aggregate.error().message;
    return aggregate ? aggregate->reports() : 0;
  }
  std::unique_ptr<Backend> backend_;
  std::string url_;
};

TEST_P(StoreTest, CommittedBatchesSurviveReopen) {
  {
    auto store = open();
    ASSERT_TRUE(store->register_metric(kMetric));
    const Batch batch = batch_of(7, {{1, true}, {2, false}, {3, true}});
    const auto outcomes = insert(*store, {&batch});
    ASSERT_EQ(outcomes.size(), 1u);
    EXPECT_EQ(outcomes[0].inserted, 3u);
  }
  auto store = open(Store::Mode::kReadOnly);
  ASSERT_TRUE(store->metric(1));
  EXPECT_EQ(store->report_count().value(), 3u);
  auto aggregate = store->aggregate(kMetric, {});
  ASSERT_TRUE(aggregate);
  EXPECT_EQ(aggregate->reports(), 3u);
  EXPECT_EQ(aggregate->support_counts(), (std::vector<uint64_t>{1, 2}));
}

// A resent batch is idempotent; a report id reused with other content is a
// conflict that stores nothing of its batch, and other batches of the same
// transaction are unaffected.
TEST_P(StoreTest, DuplicatesAreIdempotentAndConflictsStoreNothing) {
  auto store = open();
  ASSERT_TRUE(store->register_metric(kMetric));
  const Batch first = batch_of(7, {{1, true}, {2, false}});
  insert(*store, {&first});
  const Batch resent = batch_of(7, {{1, true}, {2, false}, {3, true}});
  const Batch conflicting = batch_of(8, {{1, true}});
  const Batch other_device = batch_of(9, {{1, true}});
  insert(*store, {&other_device});
  const Batch changed = batch_of(9, {{1, false}, {2, true}});  // id 1 now says 0
  const auto outcomes = insert(*store, {&resent, &changed, &conflicting});
  ASSERT_EQ(outcomes.size(), 3u);
  EXPECT_EQ(outcomes[0].inserted, 1u);
  EXPECT_EQ(outcomes[0].duplicates, 2u);
  EXPECT_FALSE(outcomes[0].conflict);
  EXPECT_TRUE(outcomes[1].conflict);
  EXPECT_EQ(outcomes[1].conflict_report_id, 1u);
  EXPECT_NE(outcomes[1].conflict_message.find("another payload"), std::string::npos)
      << outcomes[1].conflict_message;
  EXPECT_EQ(outcomes[1].inserted, 0u);
  EXPECT_EQ(outcomes[2].inserted, 1u);
  // 7:1 7:2 9:1, then 7:3 and 8:1; device 9's report 2 was not stored.
  EXPECT_EQ(store->report_count().value(), 5u);
  EXPECT_EQ(estimate_n(*store, kMetric), 5u);
}

// The whole configuration is kept; a changed metric is refused naming the
// field, an identical registration is fine, after a restart too.
TEST_P(StoreTest, ChangedMetricIsRefusedNamingTheField) {
  MetricConfig rappor{5, MechanismId::kRappor, 2000000, 50};
  rappor.rappor = {128, 2, 16};
  rappor.hash_key = 99;
  rappor.bucket_seconds = 900;
  {
    auto store = open();
    ASSERT_TRUE(store->register_metric(rappor));
  }
  auto store = open();
  ASSERT_TRUE(store->metric(5));
  EXPECT_TRUE(*store->metric(5) == rappor);
  EXPECT_TRUE(store->register_metric(rappor));
  for (auto change : std::vector<std::pair<const char*, void (*)(MetricConfig&)>>{
           {"rappor_hash_key", [](MetricConfig& m) { m.hash_key = 1; }},
           {"bucket_seconds", [](MetricConfig& m) { m.bucket_seconds = 3600; }},
           {"retention_days", [](MetricConfig& m) { m.retention_days = 7; }},
           {"rappor_cohort_count", [](MetricConfig& m) { m.rappor.cohort_count = 32; }},
           {"epsilon_micros", [](MetricConfig& m) { m.epsilon_micros = 1000000; }}}) {
    MetricConfig changed = rappor;
    change.second(changed);
    const auto status = store->register_metric(changed);
    ASSERT_FALSE(status) << change.first;
    EXPECT_EQ(status.error().kind, Error::Kind::kConflict);
    EXPECT_NE(status.error().message.find(change.first), std::string::npos)
        << status.error().message;
  }
  EXPECT_TRUE(*store->metric(5) == rappor);
}

// Reports are bucketed by the device's time when plausible, else by the
// receive time, and estimates read the buckets of a range.
TEST_P(StoreTest, TimeBucketsAndRanges) {
  auto store = open();
  ASSERT_TRUE(store->register_metric(kMetric));
  const int64_t hour = 3600;
  const int64_t this_hour = kNow - kNow % hour;
  Batch batch = batch_of(11, {{1, true}, {2, true}, {3, true}, {4, true}});
  batch.reports[0].observed_minute = static_cast<uint32_t>((kNow - 2 * hour) / 60);  // 2 h ago
  batch.reports[1].observed_minute = static_cast<uint32_t>((kNow + 2 * hour) / 60);  // future
  batch.reports[2].observed_minute = static_cast<uint32_t>((kNow - 40 * 86400) / 60);  // too old
  insert(*store, {&batch});
  auto buckets = store->period_aggregates(kMetric, {}, hour, true);
  ASSERT_TRUE(buckets);
  ASSERT_EQ(buckets->size(), 2u);
  EXPECT_EQ((*buckets)[0].start, this_hour - 2 * hour);
  EXPECT_EQ((*buckets)[0].aggregate.reports(), 1u);
  EXPECT_EQ((*buckets)[1].start, this_hour);
  EXPECT_EQ((*buckets)[1].aggregate.reports(), 3u);
  EXPECT_EQ(estimate_n(*store, kMetric, {this_hour - hour, INT64_MAX}), 3u);
  EXPECT_EQ(estimate_n(*store, kMetric, {INT64_MIN, this_hour}), 1u);
  EXPECT_EQ(estimate_n(*store, kMetric, {this_hour + hour, INT64_MAX}), 0u);
  EXPECT_EQ(report_time(kMetric, static_cast<uint32_t>((kNow + 60) / 60), kNow).source,
            store::TimeSource::kDevice);  // within the allowed clock skew
}

// For every mechanism, over several transactions, buckets and two nodes:
// the aggregates equal the aggregation of the raw reports, before and after
// reaggregate.
TEST_P(StoreTest, AggregatesEqualReaggregationFromRawForEveryMechanism) {
  auto metrics = blur_test::one_metric_per_mechanism();
  // A device's 8 reports may share a metric and bucket: not what this tests.
  for (MetricConfig& metric : metrics) metric.max_reports_per_bucket = 8;
  std::mt19937_64 rng(21);
  uint64_t nonce = 1000;
  for (int node = 0; node < 2; ++node) {
    auto store = open();
    for (const MetricConfig& metric : metrics) ASSERT_TRUE(store->register_metric(metric));
    for (int round = 0; round < 3; ++round) {
      std::vector<Batch> batches(20);
      for (Batch& batch : batches) {
        batch.device_nonce = ++nonce;
        for (uint64_t id = 1; id <= 8; ++id) {
          IncomingReport r = blur_test::random_report(metrics[rng() % metrics.size()], rng);
          r.report_id = id;
          r.observed_minute = static_cast<uint32_t>((kNow - (rng() % 5) * 3600) / 60);
          batch.reports.push_back(r);
        }
      }
      std::vector<const Batch*> pointers;
      for (const Batch& b : batches) pointers.push_back(&b);
      const auto outcomes = insert(*store, pointers);
      for (const auto& outcome : outcomes) ASSERT_EQ(outcome.inserted, 8u);
    }
  }
  auto store = open();
  for (const MetricConfig& metric : metrics) {
    SCOPED_TRACE(describe(metric));
    auto stored = store->aggregate(metric, {});
    auto raw = store->aggregate_from_raw(metric, {});
    ASSERT_TRUE(stored && raw);
    EXPECT_GT(stored->reports(), 0u);
    EXPECT_EQ(stored->serialize(), raw->serialize());
    ASSERT_TRUE(store->reaggregate(metric));
    auto rebuilt = store->aggregate(metric, {});
    ASSERT_TRUE(rebuilt);
    EXPECT_EQ(rebuilt->serialize(), raw->serialize());
  }
}

// Word discovery's tally is sparse and its aggregate row grows with every
// distinct cell. Once a row passes Store::kAggregateRowBytes the node goes
// on in new rows (a fresh writer id), so a commit never rewrites more than
// about that much; the sum of the rows is still exactly the raw reports'
// aggregate. 96,000 pem reports at epsilon 4 (64 buckets, 2^14 seeds, 15
// levels: nearly every report a new cell, ~3.6 bytes each) make ~340 KB.
TEST_P(StoreTest, LargeSparseAggregatesAreSplitIntoBoundedRows) {
  MetricConfig metric{9, MechanismId::kPrefixExtension, 4000000, 16};
  metric.max_reports_per_bucket = 8;
  std::mt19937_64 rng(33);
  uint64_t nonce = 5000;
  {
    auto store = open();
    ASSERT_TRUE(store->register_metric(metric));
    for (int round = 0; round < 48; ++round) {
      std::vector<Batch> batches(250);
      for (Batch& batch : batches) {
        batch.sdk_version = 256;
        batch.device_nonce = ++nonce;
        for (uint64_t id = 1; id <= 8; ++id) {
          IncomingReport r = blur_test::random_report(metric, rng);
          r.report_id = id;
          r.observed_minute = static_cast<uint32_t>(kNow / 60);
          batch.reports.push_back(r);
        }
      }
      std::vector<const Batch*> pointers;
      for (const Batch& b : batches) pointers.push_back(&b);
      for (const auto& outcome : insert(*store, pointers)) ASSERT_EQ(outcome.inserted, 8u);
    }
    auto stored = store->aggregate(metric, {});
    auto raw = store->aggregate_from_raw(metric, {});
    ASSERT_TRUE(stored && raw);
    EXPECT_EQ(stored->reports(), 96000u);
    EXPECT_EQ(stored->serialize(), raw->serialize());
  }
  if (GetParam() != "sqlite") return;  // the row sizes, read straight from the file
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(url_.substr(7).c_str(), &db), SQLITE_OK);
  sqlite3_stmt* query = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT COUNT(*), MAX(LENGTH(stats)), SUM(LENGTH(stats)) "
                                   "FROM aggregates WHERE metric_id = 9",
                               -1, &query, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(query), SQLITE_ROW);
  const int64_t rows = sqlite3_column_int64(query, 0);
  const int64_t largest = sqlite3_column_int64(query, 1);
  const int64_t total = sqlite3_column_int64(query, 2);
  sqlite3_finalize(query);
  sqlite3_close(db);
  std::printf("pem aggregate: %lld rows, largest %lld B, total %lld B\n",
              static_cast<long long>(rows), static_cast<long long>(largest),
              static_cast<long long>(total));
  EXPECT_GT(total, static_cast<int64_t>(Store::kAggregateRowBytes));  // the test reaches the cap
  EXPECT_GE(rows, 2);
  // A row stops growing after the commit that passed the cap: one commit
  // (2,000 reports, under 12 bytes each) more at most.
  EXPECT_LE(largest, static_cast<int64_t>(Store::kAggregateRowBytes) + 2000 * 12);
}

TEST_P(StoreTest, PruneDeletesOldRawReportsAndKeepsAggregates) {
  auto store = open();
  MetricConfig metric = kMetric;
  metric.retention_days = 2;
  ASSERT_TRUE(store->register_metric(metric));
  const Batch old_batch = batch_of(1, {{1, true}, {2, false}});
  const Batch new_batch = batch_of(2, {{1, true}});
  insert(*store, {&old_batch}, kNow - 3 * 86400);
  insert(*store, {&new_batch}, kNow);
  auto deleted = store->prune(metric, kNow);
  ASSERT_TRUE(deleted);
  EXPECT_EQ(deleted.value(), 2u);
  EXPECT_EQ(store->report_count().value(), 1u);
  EXPECT_EQ(estimate_n(*store, metric), 3u);  // aggregates stay
  // The contribution bound's counts are pruned with the reports they count.
  const int64_t old_bucket = (kNow - 3 * 86400) - (kNow - 3 * 86400) % 3600;
  EXPECT_EQ(store->device_count(metric.id, old_bucket, 1).value(), 0u);
  EXPECT_EQ(store->device_count(metric.id, kNow - kNow % 3600, 2).value(), 1u);
  // So are the receive-time allowance's, per day of arrival.
  const int64_t today = kNow - kNow % 86400;
  EXPECT_EQ(store->receive_day_count(metric.id, today - 3 * 86400, 1).value(), 0u);
  EXPECT_EQ(store->receive_day_count(metric.id, today, 2).value(), 1u);
}

TEST_P(StoreTest, NewerSchemaIsRefused) {
  { auto store = open(); }
  backend_->set_schema_version(url_, 99);
  auto refused = Store::open(url_, Store::Mode::kReadWrite);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("newer than this collector"), std::string::npos)
      << refused.error().message;
}

// ---- the contribution bound --------------------------------------------------

constexpr int64_t kThisHour = kNow - kNow % 3600;

// `count` reports of `metric_id` from one device, ids first_id.., observed
// `hours_ago` (0: this hour).
Batch device_batch(uint64_t nonce, uint32_t metric_id, uint64_t first_id, size_t count,
                   int64_t hours_ago = 0) {
  Batch batch = batch_of(nonce, {});
  for (size_t i = 0; i < count; ++i) {
    IncomingReport r = blur_test::binary_report(first_id + i, i % 2 == 0);
    r.metric_id = metric_id;
    r.observed_minute = static_cast<uint32_t>((kNow - hours_ago * 3600) / 60);
    batch.reports.push_back(r);
  }
  return batch;
}

// Per device, metric and bucket at most max_reports_per_bucket reports are
// stored; the excess is neither stored nor aggregated, and the answer says
// which bound refused it. Other devices, buckets and metrics are independent.
TEST_P(StoreTest, BoundIsPerDevicePerMetricPerBucket) {
  auto store = open();
  MetricConfig bounded = kMetric;
  bounded.max_reports_per_bucket = 3;
  MetricConfig by_default{2, MechanismId::kBinaryRandomizedResponse, 1000000, 2};
  ASSERT_TRUE(store->register_metric(bounded));
  ASSERT_TRUE(store->register_metric(by_default));
  EXPECT_EQ(reports_per_bucket_limit(by_default), 4u);  // 4 x epsilon allowance / epsilon

  const Batch first = device_batch(7, 1, 1, 5);
  auto outcome = insert(*store, {&first});
  ASSERT_EQ(outcome.size(), 1u);
  EXPECT_EQ(outcome[0].inserted, 3u);
  EXPECT_EQ(outcome[0].over_limit, 2u);
  EXPECT_EQ(outcome[0].limit_message,
            "metric 1 accepts at most 3 reports per device per 3600-second bucket");
  // A later batch of the same device and bucket: the bound is already spent.
  const Batch later = device_batch(7, 1, 100, 2);
  outcome = insert(*store, {&later});
  EXPECT_EQ(outcome[0].inserted, 0u);
  EXPECT_EQ(outcome[0].over_limit, 2u);
  // Independent: another device, another bucket, another metric.
  const Batch other_device = device_batch(8, 1, 1, 3);
  const Batch other_bucket = device_batch(9, 1, 1, 3, 2);
  outcome = insert(*store, {&other_device, &other_bucket});
  EXPECT_EQ(outcome[0].inserted, 3u);
  EXPECT_EQ(outcome[0].over_limit, 0u);
  EXPECT_TRUE(outcome[0].limit_message.empty());
  EXPECT_EQ(outcome[1].inserted, 3u);
  const Batch same_device_earlier = device_batch(7, 1, 200, 4, 2);
  const Batch same_device_metric_2 = device_batch(7, 2, 300, 6);
  outcome = insert(*store, {&same_device_earlier});
  EXPECT_EQ(outcome[0].inserted, 3u);
  EXPECT_EQ(outcome[0].over_limit, 1u);
  outcome = insert(*store, {&same_device_metric_2});
  EXPECT_EQ(outcome[0].inserted, 4u);
  EXPECT_EQ(outcome[0].over_limit, 2u);
  EXPECT_EQ(outcome[0].limit_message,
            "metric 2 accepts at most 4 reports per device per 3600-second bucket");

  EXPECT_EQ(store->device_count(1, kThisHour, 7).value(), 3u);
  EXPECT_EQ(store->device_count(1, kThisHour - 7200, 7).value(), 3u);
  EXPECT_EQ(store->device_count(2, kThisHour, 7).value(), 4u);
  EXPECT_EQ(store->device_count(1, kThisHour, 8).value(), 3u);
  // 3 + 3 + 3 + 3 of metric 1, 4 of metric 2: nothing refused was stored.
  EXPECT_EQ(store->report_count(1).value(), 12u);
  EXPECT_EQ(store->report_count(2).value(), 4u);
  EXPECT_EQ(estimate_n(*store, bounded), 12u);
  EXPECT_EQ(estimate_n(*store, by_default), 4u);
  for (const MetricConfig& metric : {bounded, by_default}) {
    auto stored = store->aggregate(metric, {});
    auto raw = store->aggregate_from_raw(metric, {});
    ASSERT_TRUE(stored && raw);
    EXPECT_EQ(stored->serialize(), raw->serialize());
  }
}

// A resent batch stays idempotent: its stored reports are duplicates that
// never count twice, and its refused ones are refused again.
TEST_P(StoreTest, DuplicatesNeverCountAgainstTheBound) {
  auto store = open();
  MetricConfig bounded = kMetric;
  bounded.max_reports_per_bucket = 3;
  ASSERT_TRUE(store->register_metric(bounded));
  const Batch first = device_batch(7, 1, 1, 2);
  EXPECT_EQ(insert(*store, {&first})[0].inserted, 2u);
  for (int resend = 0; resend < 3; ++resend) {
    SCOPED_TRACE(resend);
    const Batch resent = device_batch(7, 1, 1, 2);
    const auto outcome = insert(*store, {&resent});
    EXPECT_EQ(outcome[0].inserted, 0u);
    EXPECT_EQ(outcome[0].duplicates, 2u);
    EXPECT_EQ(outcome[0].over_limit, 0u);
  }
  const Batch grown = device_batch(7, 1, 1, 5);  // ids 1, 2 again, then 3, 4, 5
  auto outcome = insert(*store, {&grown});
  EXPECT_EQ(outcome[0].duplicates, 2u);
  EXPECT_EQ(outcome[0].inserted, 1u);
  EXPECT_EQ(outcome[0].over_limit, 2u);
  outcome = insert(*store, {&grown});
  EXPECT_EQ(outcome[0].duplicates, 3u);
  EXPECT_EQ(outcome[0].inserted, 0u);
  EXPECT_EQ(outcome[0].over_limit, 2u);
  EXPECT_EQ(store->device_count(1, kThisHour, 7).value(), 3u);
  EXPECT_EQ(store->report_count().value(), 3u);
  EXPECT_EQ(estimate_n(*store, bounded), 3u);
}

// Within one group of batches: each batch's excess is its own, a batch of
// two metrics names both bounds, and a conflicting batch neither counts
// nor takes another's room.
TEST_P(StoreTest, ExcessWithinOneGroupOfBatches) {
  auto store = open();
  MetricConfig two{2, MechanismId::kBinaryRandomizedResponse, 500000, 2};
  two.epsilon_allowance_per_bucket_micros = 1000000;  // 2 reports at epsilon 0.5
  ASSERT_TRUE(store->register_metric(kMetric));       // the default: 4
  ASSERT_TRUE(store->register_metric(two));
  EXPECT_EQ(reports_per_bucket_limit(two), 2u);
  const Batch stored_before = device_batch(10, 1, 1, 1);
  insert(*store, {&stored_before});

  const Batch six = device_batch(7, 1, 1, 6);
  const Batch within = device_batch(8, 1, 1, 4);
  Batch mixed = device_batch(9, 1, 1, 5);
  for (IncomingReport r : device_batch(9, 2, 100, 3).reports) {
    r.epsilon_micros = 500000;
    mixed.reports.push_back(r);
  }
  Batch conflicting = device_batch(10, 1, 1, 5);
  conflicting.reports[0].value = 1 - conflicting.reports[0].value;  // id 1 with another payload
  const auto outcome = insert(*store, {&six, &within, &mixed, &conflicting});
  ASSERT_EQ(outcome.size(), 4u);
  EXPECT_EQ(outcome[0].inserted, 4u);
  EXPECT_EQ(outcome[0].over_limit, 2u);
  EXPECT_EQ(outcome[1].inserted, 4u);
  EXPECT_EQ(outcome[1].over_limit, 0u);
  EXPECT_EQ(outcome[2].inserted, 4u + 2u);
  EXPECT_EQ(outcome[2].over_limit, 1u + 1u);
  EXPECT_EQ(outcome[2].limit_message,
            "metric 1 accepts at most 4 reports per device per 3600-second bucket; "
            "metric 2 accepts at most 2 reports per device per 3600-second bucket");
  EXPECT_TRUE(outcome[3].conflict);
  EXPECT_EQ(outcome[3].over_limit, 0u);
  EXPECT_EQ(store->device_count(1, kThisHour, 10).value(), 1u);
  // The refused reports were the last ones of each batch.
  auto kept = store->report_count(1);
  EXPECT_EQ(kept.value(), 1u + 4u + 4u + 4u);
  EXPECT_EQ(estimate_n(*store, kMetric), 13u);
  EXPECT_EQ(estimate_n(*store, two), 2u);
  // Device 10 still has room for 3 more.
  const Batch rest = device_batch(10, 1, 50, 5);
  EXPECT_EQ(insert(*store, {&rest})[0].inserted, 3u);
}

// The bound is part of the metric: kept, compared on restart, and a changed
// bound is a changed metric. A configuration stored before the bound
// existed means the defaults.
// The counts an estimate's variance reads (estimate/device_clustering.h):
// each device's reports summed over the range's buckets, or per period, on
// SQLite and PostgreSQL alike (nonces above 2^63 included); pruned with the
// raw reports, after which the estimate bounds the uncounted reports by the
// metric's bound times the buckets.
TEST_P(StoreTest, DeviceCountsSumEachDeviceOverTheBucketsOfARangeOrPeriod) {
  auto store = open();
  MetricConfig metric = kMetric;
  metric.max_reports_per_bucket = 10;
  metric.retention_days = 1;
  ASSERT_TRUE(store->register_metric(metric));
  const uint64_t high = 0x8000000000000005ull;
  const Batch now_7 = device_batch(7, 1, 1, 3), earlier_7 = device_batch(7, 1, 10, 2, 2),
              now_8 = device_batch(8, 1, 1, 1), old_high = device_batch(high, 1, 1, 4, 26);
  insert(*store, {&now_7, &now_8});
  insert(*store, {&earlier_7});
  insert(*store, {&old_high}, kNow - 26 * 3600);
  const auto expect = [](const DeviceCounts& c, uint64_t devices, uint64_t reports, double squares,
                         uint64_t max) {
    EXPECT_EQ(c.devices, devices);
    EXPECT_EQ(c.reports, reports);
    EXPECT_DOUBLE_EQ(c.sum_squares, squares);
    EXPECT_EQ(c.max_reports, max);
  };
  // Whole range: device 7 sent 3 + 2, device 8 one, the high nonce 4.
  auto all = store->device_counts(metric, {});
  ASSERT_TRUE(all) << all.error().message;
  ASSERT_EQ(all->size(), 1u);
  EXPECT_EQ(all->front().period_start, 0);
  expect(all->front().counts, 3, 10, 25 + 1 + 16, 5);
  // A range of buckets.
  auto recent = store->device_counts(metric, {kThisHour - 3 * 3600, kThisHour + 1});
  ASSERT_TRUE(recent && recent->size() == 1u);
  expect(recent->front().counts, 2, 6, 25 + 1, 5);
  // Per hour and per day (kNow is 11 hours into its day).
  auto hours = store->device_counts(metric, {}, 3600);
  ASSERT_TRUE(hours && hours->size() == 3u);
  EXPECT_EQ((*hours)[0].period_start, kThisHour - 26 * 3600);
  expect((*hours)[0].counts, 1, 4, 16, 4);
  EXPECT_EQ((*hours)[1].period_start, kThisHour - 2 * 3600);
  expect((*hours)[1].counts, 1, 2, 4, 2);
  EXPECT_EQ((*hours)[2].period_start, kThisHour);
  expect((*hours)[2].counts, 2, 4, 9 + 1, 3);
  auto days = store->device_counts(metric, {}, 86400);
  ASSERT_TRUE(days && days->size() == 2u);
  EXPECT_EQ((*days)[1].period_start, kNow - kNow % 86400);
  expect((*days)[0].counts, 1, 4, 16, 4);
  expect((*days)[1].counts, 2, 6, 25 + 1, 5);
  // Nothing in an empty range.
  auto none = store->device_counts(metric, {kNow + 86400, kNow + 2 * 86400});
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());

  // After the prune the old bucket's aggregate stays but its counts go: its
  // 4 reports are uncounted, each device bounded by 10 per bucket x 3 buckets.
  // (At 00:00 the next day, a day after the old bucket's day ended: on
  // PostgreSQL a retention ends at a UTC midnight, whole days go.)
  ASSERT_TRUE(store->prune(metric, kNow - kNow % 86400 + 86400));
  auto counted = store->device_counts(metric, {});
  ASSERT_TRUE(counted && counted->size() == 1u);
  expect(counted->front().counts, 2, 6, 26, 5);
  uint64_t buckets = 0;
  auto aggregate = store->aggregate(metric, {}, &buckets);
  ASSERT_TRUE(aggregate);
  EXPECT_EQ(aggregate->reports(), 10u);
  EXPECT_EQ(buckets, 3u);
  MetricConfig clustered = metric;  // as a memoized metric's estimate reads them
  clustered.longitudinal_epsilon_micros = 1;
  const DeviceClustering clustering =
      metric_clustering(clustered, aggregate->reports(), counted->front().counts, buckets);
  EXPECT_EQ(clustering.uncounted_reports(), 4u);
  EXPECT_EQ(clustering.uncounted_cap(), 4u);
  EXPECT_DOUBLE_EQ(clustering.max_reports(), 9.0);
}

TEST_P(StoreTest, BoundIsPartOfTheStoredConfiguration) {
  MetricConfig metric = kMetric;
  metric.max_reports_per_bucket = 10;
  {
    auto store = open();
    ASSERT_TRUE(store->register_metric(metric));
  }
  auto store = open();
  ASSERT_TRUE(store->metric(1));
  EXPECT_EQ(reports_per_bucket_limit(*store->metric(1)), 10u);
  EXPECT_EQ(epsilon_allowance_per_bucket(*store->metric(1)), 10000000u);
  EXPECT_TRUE(store->register_metric(metric));
  MetricConfig allowance = kMetric;  // the same bound, said as an allowance
  allowance.epsilon_allowance_per_bucket_micros = 10000000;
  EXPECT_TRUE(store->register_metric(allowance));
  MetricConfig eleven = kMetric;
  eleven.max_reports_per_bucket = 11;
  for (const MetricConfig& changed : {kMetric, eleven}) {
    const auto status = store->register_metric(changed);
    ASSERT_FALSE(status);
    EXPECT_EQ(status.error().kind, Error::Kind::kConflict);
    EXPECT_NE(status.error().message.find("max_reports_per_bucket: 10 -> " +
                                          std::to_string(reports_per_bucket_limit(changed))),
              std::string::npos)
        << status.error().message;
  }
}

// A version-1 database (before the bound) is upgraded on open: its stored
// reports are counted, so the bound holds across the upgrade.
TEST_P(StoreTest, Version1DatabaseIsUpgradedWithCounts) {
  {
    auto store = open();
    ASSERT_TRUE(store->register_metric(kMetric));
    const Batch batch = device_batch(7, 1, 1, 3);
    insert(*store, {&batch});
  }
  backend_->make_version_1(url_);
  auto store = open();
  ASSERT_TRUE(store);
  EXPECT_EQ(store->device_count(1, kThisHour, 7).value(), 3u);
  EXPECT_EQ(store->receive_day_count(1, kNow - kNow % 86400, 7).value(), 3u);  // and 2 -> 3
  const Batch more = device_batch(7, 1, 10, 3);
  const auto outcome = insert(*store, {&more});
  EXPECT_EQ(outcome[0].inserted, 1u);
  EXPECT_EQ(outcome[0].over_limit, 2u);
}

// ---- devices (enrollment's bindings) -----------------------------------------

std::array<uint8_t, 32> key(uint8_t fill) {
  std::array<uint8_t, 32> k;
  k.fill(fill);
  return k;
}

// The first binding of a nonce stands, for this and every other collector
// of the database; renewals, enrollment times and counts read back.
TEST_P(StoreTest, ANonceBindsOnceToItsFirstKey) {
  auto store = open();
  auto other = open();  // a second collector on the same database
  ASSERT_TRUE(store && other);
  constexpr uint64_t kHigh = 0xfedcba9876543210u;  // above 2^63: stored as its bits
  EXPECT_FALSE(store->device(kHigh).value());
  EXPECT_EQ(store->enrolled_at(kHigh).value(), std::nullopt);
  auto first = store->bind_device(kHigh, key(1), kNow);
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->key_sha256, key(1));
  auto second = other->bind_device(kHigh, key(2), kNow + 5);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(second->key_sha256, key(1)) << "the first binding stands";
  EXPECT_EQ(second->enrolled_at, kNow);
  EXPECT_EQ(second->device_nonce, kHigh);
  ASSERT_TRUE(other->record_renewal(kHigh, kNow + 3600));
  const auto read = store->device(kHigh).value();
  ASSERT_TRUE(read);
  EXPECT_EQ(read->key_sha256, key(1));
  EXPECT_EQ(read->enrolled_at, kNow);
  EXPECT_EQ(read->last_renewed_at, kNow + 3600);
  EXPECT_EQ(store->enrolled_at(kHigh).value(), std::optional<int64_t>(kNow));

  ASSERT_TRUE(store->bind_device(1, key(3), kNow + 100));
  ASSERT_TRUE(store->bind_device(2, key(4), kNow + 200));
  EXPECT_EQ(store->devices_enrolled_since(kNow).value(), 3u);
  EXPECT_EQ(store->devices_enrolled_since(kNow + 100).value(), 2u);
  EXPECT_EQ(store->devices_enrolled_since(kNow + 201).value(), 0u);

  // has_reports: an index probe on the reports' key.
  ASSERT_TRUE(store->register_metric(kMetric));
  EXPECT_FALSE(store->has_reports(7).value());
  const Batch batch = batch_of(7, {{1, true}});
  insert(*store, {&batch});
  EXPECT_TRUE(store->has_reports(7).value());
  EXPECT_TRUE(other->has_reports(7).value());
  EXPECT_FALSE(store->has_reports(8).value());
  // Read-only stores read bindings but write none.
  auto reader = open(Store::Mode::kReadOnly);
  EXPECT_TRUE(reader->device(kHigh).value());
  EXPECT_FALSE(reader->bind_device(9, key(5), kNow));
}

// A version-2 database (before device keys) gets an empty devices table on
// open: its reports stay, and its devices bind at their next enrollment.
TEST_P(StoreTest, Version2DatabaseIsUpgradedWithAnEmptyDevicesTable) {
  {
    auto store = open();
    ASSERT_TRUE(store->register_metric(kMetric));
    const Batch batch = device_batch(7, 1, 1, 3);
    insert(*store, {&batch});
  }
  backend_->make_version_2(url_);
  auto store = open();
  ASSERT_TRUE(store);
  EXPECT_TRUE(store->has_reports(7).value());
  EXPECT_FALSE(store->device(7).value());
  EXPECT_EQ(store->device_count(1, kThisHour, 7).value(), 3u);
  ASSERT_TRUE(store->bind_device(7, key(7), kNow));
  EXPECT_EQ(store->devices_enrolled_since(0).value(), 1u);
  // Upgraded to this version: reopening is a plain check.
  store.reset();
  EXPECT_TRUE(open()->device(7).value());
}

// ---- the receive-time allowance and the age window ----------------------------

constexpr int64_t kToday = kNow - kNow % 86400;  // kNow is 11 hours into its UTC day

// Reports of one device observed `hours_ago` each (4 ids per hour in order).
Batch backdated_batch(uint64_t nonce, uint64_t first_id, int64_t first_hour, int64_t hours,
                      size_t per_hour) {
  Batch batch = batch_of(nonce, {});
  for (int64_t h = first_hour; h < first_hour + hours; ++h) {
    const uint64_t id = first_id + static_cast<uint64_t>(h - first_hour) * per_hour;
    for (const IncomingReport& r : device_batch(nonce, 1, id, per_hour, h).reports) {
      batch.reports.push_back(r);
    }
  }
  return batch;
}

// Issue 26's attack in small: a device claiming many past buckets, each
// within the per-bucket bound, is bounded per day of arrival as well
// (reports_per_day_limit: 4 x 24 by default for hourly buckets), so its
// clock cannot multiply the bound by the buckets of the retention.
TEST_P(StoreTest, BackdatingIsBoundedPerDayOfArrival) {
  auto store = open();
  ASSERT_TRUE(store->register_metric(kMetric));
  ASSERT_EQ(reports_per_day_limit(kMetric), 96u);
  // 4 reports in each of the last 60 hours (all within the 3-day window).
  const Batch backdated = backdated_batch(7, 1, 0, 60, 4);
  auto outcome = insert(*store, {&backdated});
  ASSERT_EQ(outcome.size(), 1u);
  EXPECT_EQ(outcome[0].inserted, 96u);
  EXPECT_EQ(outcome[0].over_limit, 240u - 96u);
  EXPECT_EQ(outcome[0].implausible_time, 0u);
  EXPECT_EQ(outcome[0].limit_message,
            "metric 1 accepts at most 96 reports per device per day of arrival (UTC)");
  EXPECT_EQ(store->receive_day_count(1, kToday, 7).value(), 96u);
  EXPECT_EQ(store->report_count(1).value(), 96u);
  EXPECT_EQ(estimate_n(*store, kMetric), 96u);
  // The first 24 hours in batch order stayed; the refused rows left their
  // buckets' counts too.
  EXPECT_EQ(store->device_count(1, kThisHour - 23 * 3600, 7).value(), 4u);
  EXPECT_EQ(store->device_count(1, kThisHour - 24 * 3600, 7).value(), 0u);
  // Spent for the day: one more report, in a bucket the device never used, is refused.
  const Batch more = device_batch(7, 1, 1000, 1, 40);
  outcome = insert(*store, {&more});
  EXPECT_EQ(outcome[0].inserted, 0u);
  EXPECT_EQ(outcome[0].over_limit, 1u);
  EXPECT_EQ(store->device_count(1, kThisHour - 40 * 3600, 7).value(), 0u);
  // Another device has its own allowance; the next day of arrival renews it.
  const Batch other = backdated_batch(8, 1, 0, 30, 4);
  EXPECT_EQ(insert(*store, {&other})[0].inserted, 96u);
  const Batch tomorrow = device_batch(7, 1, 2000, 4, 30);  // observed kNow - 30 h
  outcome = insert(*store, {&tomorrow}, kNow + 86400);
  EXPECT_EQ(outcome[0].inserted, 4u);
  EXPECT_EQ(store->receive_day_count(1, kToday + 86400, 7).value(), 4u);
  EXPECT_EQ(store->receive_day_count(1, kToday, 7).value(), 96u);
  auto stored = store->aggregate(kMetric, {});
  auto raw = store->aggregate_from_raw(kMetric, {});
  ASSERT_TRUE(stored && raw);
  EXPECT_EQ(stored->serialize(), raw->serialize());
  EXPECT_EQ(stored->reports(), 96u + 96u + 4u);
}

// Both bounds in one batch: the per-bucket bound refuses first, the
// allowance counts what it let through (batch order), and every refused row
// leaves every count that counted it; the answer names both bounds.
TEST_P(StoreTest, BucketBoundAndDailyAllowanceTogether) {
  auto store = open();
  MetricConfig metric = kMetric;
  metric.max_reports_per_bucket = 4;
  metric.max_reports_per_day = 6;
  ASSERT_TRUE(store->register_metric(metric));
  Batch batch = device_batch(7, 1, 1, 5);  // ids 1..5 this hour: 5 over the bucket bound
  for (const IncomingReport& r : device_batch(7, 1, 6, 5, 1).reports) batch.reports.push_back(r);
  // ids 6..10 an hour ago: 10 over the bucket bound; then the allowance
  // keeps 1, 2, 3, 4, 6, 7 and refuses 8, 9.
  auto outcome = insert(*store, {&batch});
  EXPECT_EQ(outcome[0].inserted, 6u);
  EXPECT_EQ(outcome[0].over_limit, 4u);
  EXPECT_EQ(outcome[0].limit_message,
            "metric 1 accepts at most 4 reports per device per 3600-second bucket; "
            "metric 1 accepts at most 6 reports per device per day of arrival (UTC)");
  EXPECT_EQ(store->device_count(1, kThisHour, 7).value(), 4u);
  EXPECT_EQ(store->device_count(1, kThisHour - 3600, 7).value(), 2u);
  EXPECT_EQ(store->receive_day_count(1, kToday, 7).value(), 6u);
  auto kept = store->report_count(1);
  EXPECT_EQ(kept.value(), 6u);
  EXPECT_EQ(estimate_n(*store, metric), 6u);
  // Resent: the stored ones are duplicates, the refused ones refused again.
  outcome = insert(*store, {&batch});
  EXPECT_EQ(outcome[0].inserted, 0u);
  EXPECT_EQ(outcome[0].duplicates, 6u);
  EXPECT_EQ(outcome[0].over_limit, 4u);
  EXPECT_EQ(store->receive_day_count(1, kToday, 7).value(), 6u);
  EXPECT_EQ(store->device_count(1, kThisHour - 3600, 7).value(), 2u);
}

// Reports observed more than the window (--max-report-age, default 3 days)
// before they arrive are bucketed at their arrival, under that bucket's
// bound, and counted; within the window the device's time stands.
TEST_P(StoreTest, ReportsOlderThanTheAgeWindowAreBucketedAtArrival) {
  MetricConfig metric = kMetric;
  metric.max_reports_per_bucket = 10;
  {
    auto store = open();
    ASSERT_TRUE(store->register_metric(metric));
    Batch batch = batch_of(7, {{1, true}, {2, true}, {3, true}, {4, true}, {5, true}});
    batch.reports[0].observed_minute = static_cast<uint32_t>((kNow - 71 * 3600) / 60);
    batch.reports[1].observed_minute = static_cast<uint32_t>((kNow - 73 * 3600) / 60);
    batch.reports[2].observed_minute = static_cast<uint32_t>((kNow - 10 * 86400) / 60);
    batch.reports[3].observed_minute = static_cast<uint32_t>((kNow + 3600) / 60);  // future
    // reports[4] has no time: the receive time, and nothing implausible.
    const auto outcome = insert(*store, {&batch});
    EXPECT_EQ(outcome[0].inserted, 5u);
    EXPECT_EQ(outcome[0].implausible_time, 3u);
    EXPECT_EQ(store->device_count(1, kThisHour - 71 * 3600, 7).value(), 1u);
    EXPECT_EQ(store->device_count(1, kThisHour - 73 * 3600, 7).value(), 0u);
    EXPECT_EQ(store->device_count(1, kThisHour, 7).value(), 4u);
    // A resend is all duplicates: nothing counted again.
    EXPECT_EQ(insert(*store, {&batch})[0].implausible_time, 0u);
  }
  {
    StoreOptions one_hour;
    one_hour.max_report_age_seconds = 3600;
    auto store = open(Store::Mode::kReadWrite, one_hour);
    Batch batch = batch_of(8, {{1, true}, {2, true}});
    batch.reports[0].observed_minute = static_cast<uint32_t>((kNow - 1800) / 60);
    batch.reports[1].observed_minute = static_cast<uint32_t>((kNow - 7200) / 60);
    const auto outcome = insert(*store, {&batch});
    EXPECT_EQ(outcome[0].inserted, 2u);
    EXPECT_EQ(outcome[0].implausible_time, 1u);
    EXPECT_EQ(store->device_count(1, kThisHour - 3600, 8).value(), 1u);  // 30 min ago
    EXPECT_EQ(store->device_count(1, kThisHour, 8).value(), 1u);
  }
  const auto at = [](int64_t t) { return static_cast<uint32_t>(t / 60); };
  EXPECT_EQ(report_time(metric, at(kNow - 3 * 86400 + 60), kNow).source,
            store::TimeSource::kDevice);
  EXPECT_EQ(report_time(metric, at(kNow - 3 * 86400 - 60), kNow).source,
            store::TimeSource::kReceived);
  EXPECT_EQ(report_time(metric, at(kNow - 3 * 86400 - 60), kNow, 4 * 86400).source,
            store::TimeSource::kDevice);
  MetricConfig short_retention = metric;  // the retention is a window too
  short_retention.retention_days = 1;
  EXPECT_EQ(report_time(short_retention, at(kNow - 2 * 86400), kNow, 4 * 86400).source,
            store::TimeSource::kReceived);
  EXPECT_FALSE(Store::open(url_, Store::Mode::kReadWrite, StoreOptions{0}));
}

// A version-2 database (before the allowance) is upgraded on open: its
// stored reports are counted per day of arrival, so the allowance holds
// across the upgrade.
TEST_P(StoreTest, Version2DatabaseIsUpgradedWithReceiveCounts) {
  MetricConfig metric = kMetric;
  metric.max_reports_per_bucket = 10;
  metric.max_reports_per_day = 5;
  {
    auto store = open();
    ASSERT_TRUE(store->register_metric(metric));
    const Batch yesterday = device_batch(7, 1, 1, 2, 30);
    const Batch today = device_batch(7, 1, 10, 3);
    insert(*store, {&yesterday}, kNow - 86400);
    insert(*store, {&today});
  }
  backend_->make_version_2(url_);
  auto store = open();
  ASSERT_TRUE(store);
  EXPECT_EQ(store->receive_day_count(1, kToday - 86400, 7).value(), 2u);
  EXPECT_EQ(store->receive_day_count(1, kToday, 7).value(), 3u);
  const Batch more = device_batch(7, 1, 20, 4, 2);
  const auto outcome = insert(*store, {&more});
  EXPECT_EQ(outcome[0].inserted, 2u);
  EXPECT_EQ(outcome[0].over_limit, 2u);
}

// Two collectors (two stores on one database) taking one device's batches
// at once: together they never store more than its allowance, exactly.
TEST_P(StoreTest, ConcurrentWritersShareOneAllowance) {
  MetricConfig metric = kMetric;
  metric.max_reports_per_bucket = 100;
  metric.max_reports_per_day = 30;
  auto a = open();
  auto b = open();
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->register_metric(metric));
  ASSERT_TRUE(b->register_metric(metric));
  std::atomic<uint64_t> inserted{0}, over{0};
  auto post = [&](Store* store, uint64_t first_id) {
    for (uint64_t k = 0; k < 25; ++k) {
      const Batch batch = device_batch(7, 1, first_id + 2 * k, 2, static_cast<int64_t>(k % 48));
      const auto outcome = store->insert({{&batch, kNow}});
      ASSERT_TRUE(outcome) << outcome.error().message;
      inserted += outcome.value()[0].inserted;
      over += outcome.value()[0].over_limit;
    }
  };
  std::thread first(post, a.get(), 1), second(post, b.get(), 1000);
  first.join();
  second.join();
  EXPECT_EQ(inserted.load(), 30u);
  EXPECT_EQ(over.load(), 100u - 30u);
  EXPECT_EQ(a->receive_day_count(1, kToday, 7).value(), 30u);
  EXPECT_EQ(a->report_count(1).value(), 30u);
  EXPECT_EQ(estimate_n(*a, metric), 30u);
}

// The allowance is part of the metric, as the bound is: kept, compared on
// restart (its default follows the per-bucket bound and the bucket width),
// and a changed allowance is a changed metric.
TEST_P(StoreTest, AllowanceIsPartOfTheStoredConfiguration) {
  MetricConfig metric = kMetric;
  metric.max_reports_per_day = 50;
  {
    auto store = open();
    ASSERT_TRUE(store->register_metric(metric));
    ASSERT_TRUE(
        store->register_metric(MetricConfig{2, kMetric.mechanism, kMetric.epsilon_micros, 2}));
  }
  auto store = open();
  EXPECT_EQ(reports_per_day_limit(*store->metric(1)), 50u);
  EXPECT_TRUE(store->register_metric(metric));
  MetricConfig two{2, kMetric.mechanism, kMetric.epsilon_micros, 2};
  two.max_reports_per_day = 96;  // the default, said explicitly: the same metric
  EXPECT_TRUE(store->register_metric(two));
  const auto status = store->register_metric(kMetric);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().kind, Error::Kind::kConflict);
  EXPECT_NE(status.error().message.find("max_reports_per_day: 50 -> 96"), std::string::npos)
      << status.error().message;
}

// ---- time at scale: partitions, retention, duplicates, rebuilds, retirement ----

constexpr int64_t kDay = 86400;

// One report per device for days [first, first + days) of a metric bucketed
// by receive time (no observation time): `devices` devices a day, each day
// at noon UTC, report ids day * 1000 + device.
std::vector<Batch> daily_batches(int days, uint64_t devices) {
  std::vector<Batch> batches;
  for (int d = 0; d < days; ++d) {
    for (uint64_t device = 1; device <= devices; ++device) {
      Batch batch = batch_of(device, {});
      IncomingReport r = blur_test::binary_report(static_cast<uint64_t>(d) * 1000 + device,
                                                  (d + device) % 3 == 0);
      r.observed_minute = 0;
      batch.reports.push_back(r);
      batches.push_back(batch);
    }
  }
  return batches;
}

// 40 days of reports, retention 30: pruning at the end of day 40 takes days
// 0..9 (on PostgreSQL by dropping their partitions; SQLite deletes the
// rows), and leaves the kept range's raw reports whole: a re-aggregation of
// them reproduces the stored estimate exactly, and the aggregates of the
// pruned days stay.
TEST_P(StoreTest, RetentionTakesWholeDaysAndKeepsTheRestExact) {
  auto store = open();
  MetricConfig metric = kMetric;
  metric.retention_days = 30;
  ASSERT_TRUE(store->register_metric(metric));
  const int64_t first_day = kToday - 40 * kDay;
  constexpr uint64_t kDevices = 5;
  const std::vector<Batch> batches = daily_batches(40, kDevices);
  for (int d = 0; d < 40; ++d) {
    std::vector<const Batch*> day;
    for (uint64_t i = 0; i < kDevices; ++i) day.push_back(&batches[d * kDevices + i]);
    for (const auto& outcome : insert(*store, day, first_day + d * kDay + 12 * 3600)) {
      ASSERT_EQ(outcome.inserted, 1u);
    }
  }
  const TimeRange kept{first_day + 10 * kDay, INT64_MAX};
  const TimeRange gone{INT64_MIN, first_day + 10 * kDay};
  auto kept_before = store->aggregate(metric, kept);
  auto all_before = store->aggregate(metric, {});
  ASSERT_TRUE(kept_before && all_before);
  ASSERT_EQ(kept_before->reports(), 30 * kDevices);

  const int64_t now = kToday + 11 * 3600;  // day 40, 11:00
  auto dropped = store->drop_expired_partitions(now);
  ASSERT_TRUE(dropped) << dropped.error().message;
  if (GetParam() == "postgresql") {
    std::vector<int64_t> expected;
    for (int d = 0; d < 10; ++d) expected.push_back(first_day + d * kDay);
    EXPECT_EQ(dropped.value(), expected);
    // Days 10..39 and the day after the last, created ahead.
    auto left = store->report_partition_days();
    ASSERT_TRUE(left);
    std::vector<int64_t> days;
    for (int d = 10; d <= 40; ++d) days.push_back(first_day + d * kDay);
    EXPECT_EQ(left.value(), days);
  } else {
    EXPECT_TRUE(dropped->empty());  // one table: rows are deleted below
  }
  auto deleted = store->prune(metric, now);
  ASSERT_TRUE(deleted);
  EXPECT_EQ(deleted.value(), GetParam() == "postgresql" ? 0u : 10 * kDevices);
  EXPECT_EQ(store->report_count().value(), 30 * kDevices);
  EXPECT_EQ(store->aggregate_from_raw(metric, gone)->reports(), 0u);

  // The kept range: the raw reports re-aggregate to the same estimate; the
  // aggregates of pruned days are untouched by pruning.
  auto kept_raw = store->aggregate_from_raw(metric, kept);
  ASSERT_TRUE(kept_raw);
  EXPECT_EQ(kept_raw->serialize(), kept_before->serialize());
  EXPECT_EQ(store->aggregate(metric, {})->serialize(), all_before->serialize());
  // A second prune finds nothing more.
  EXPECT_TRUE(store->drop_expired_partitions(now)->empty());
  EXPECT_EQ(store->prune(metric, now).value(), 0u);
}

// A device resends a report it was never answered for. Bucketed by its
// receive time, the resend lands in a later day (a later partition on
// PostgreSQL): within the duplicate window it is still recognised; past
// the window and the age window, PostgreSQL no longer looks that far back
// and stores it again (the documented limit); SQLite's one table finds it.
TEST_P(StoreTest, ResendsIntoLaterPartitionsAreDuplicatesWithinTheWindow) {
  StoreOptions options;
  options.duplicate_window_seconds = 7 * kDay;
  auto store = open(Store::Mode::kReadWrite, options);
  ASSERT_TRUE(store->register_metric(kMetric));
  const int64_t first = kToday - 20 * kDay + 12 * 3600;
  const Batch original = batch_of(7, {{1, true}, {2, false}});
  ASSERT_EQ(insert(*store, {&original}, first)[0].inserted, 2u);
  // 7 days later: the window's edge.
  auto resent = insert(*store, {&original}, first + 7 * kDay);
  ASSERT_EQ(resent.size(), 1u);
  EXPECT_EQ(resent[0].inserted, 0u);
  EXPECT_EQ(resent[0].duplicates, 2u);
  // And as a conflict: the same id with another payload, 7 days later.
  const Batch reused = batch_of(7, {{1, false}});
  EXPECT_TRUE(insert(*store, {&reused}, first + 7 * kDay)[0].conflict);
  EXPECT_EQ(store->report_count().value(), 2u);
  // Past the window + the age window + a day: PostgreSQL does not look there.
  auto late = insert(*store, {&original}, first + (7 + 3 + 2) * kDay);
  ASSERT_EQ(late.size(), 1u);
  if (GetParam() == "postgresql") {
    EXPECT_EQ(late[0].inserted, 2u);
    EXPECT_EQ(store->report_count().value(), 4u);
  } else {
    EXPECT_EQ(late[0].duplicates, 2u);
    EXPECT_EQ(store->report_count().value(), 2u);
  }
}

// reaggregate while a collector ingests: a second store on the same
// database (another process, in production) keeps committing batches into
// the buckets being rebuilt, and nothing is lost or counted twice: the
// aggregates equal a re-aggregation of the raw reports, and hold exactly the
// accepted reports.
TEST_P(StoreTest, ReaggregateWhileIngestingLosesAndDoublesNothing) {
  constexpr uint64_t kRounds = 150;
  auto ingesting = open();
  ASSERT_TRUE(ingesting->register_metric(kMetric));
  auto rebuilding = open();
  ASSERT_TRUE(rebuilding);
  std::atomic<bool> done{false};
  std::atomic<uint64_t> accepted{0};
  std::atomic<int> failures{0};
  std::thread writer([&] {
    // 3 hours of buckets, one device per batch, 8 batches a commit.
    for (uint64_t round = 0; round < kRounds; ++round) {
      std::vector<Batch> batches;
      for (uint64_t i = 0; i < 8; ++i) {
        batches.push_back(device_batch(round * 8 + i + 1, 1, 1, 2, static_cast<int64_t>(i % 3)));
      }
      std::vector<ReceivedBatch> received;
      for (const Batch& b : batches) received.push_back({&b, kNow});
      auto outcomes = ingesting->insert(received);
      if (!outcomes) {
        ++failures;
        continue;
      }
      for (const auto& outcome : outcomes.value()) accepted += outcome.inserted;
    }
    done = true;
  });
  int rebuilds = 0;
  while (!done || rebuilds < 2) {
    auto rebuilt = rebuilding->reaggregate(kMetric);
    if (!rebuilt) {
      ADD_FAILURE() << rebuilt.error().message;
      break;
    }
    ++rebuilds;
  }
  writer.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(accepted.load(), kRounds * 8 * 2);
  auto stored = ingesting->aggregate(kMetric, {});
  auto raw = ingesting->aggregate_from_raw(kMetric, {});
  ASSERT_TRUE(stored && raw);
  EXPECT_EQ(stored->reports(), accepted.load());
  EXPECT_EQ(stored->serialize(), raw->serialize());
  EXPECT_GE(rebuilds, 2);
}

// A retired metric refuses new reports, with the reason, while other
// metrics of the same batch are stored; its estimates still read; a
// collector sharing the database learns of it at its next reload; and the
// retirement survives a reopen (the first retirement's time stands).
TEST_P(StoreTest, RetiredMetricsRefuseNewReportsAndStayReadable) {
  auto store = open();
  const MetricConfig other{2, MechanismId::kBinaryRandomizedResponse, 1000000, 2};
  ASSERT_TRUE(store->register_metric(kMetric));
  ASSERT_TRUE(store->register_metric(other));
  auto sharing = open();  // another collector on the database
  const Batch before = device_batch(7, 1, 1, 3);
  ASSERT_EQ(insert(*store, {&before})[0].inserted, 3u);
  EXPECT_FALSE(store->retired_at(1));

  auto retired = store->retire_metric(1, kNow + 60);
  ASSERT_TRUE(retired);
  EXPECT_EQ(retired.value(), kNow + 60);
  EXPECT_EQ(store->retire_metric(1, kNow + 120).value(), kNow + 60);  // the first stands
  EXPECT_EQ(store->retire_metric(99, kNow).error().kind, Error::Kind::kNotFound);

  Batch mixed = device_batch(8, 1, 1, 2);
  for (const IncomingReport& r : device_batch(8, 2, 10, 2).reports) mixed.reports.push_back(r);
  auto outcome = insert(*store, {&mixed});
  ASSERT_EQ(outcome.size(), 1u);
  EXPECT_EQ(outcome[0].inserted, 2u);
  EXPECT_EQ(outcome[0].retired, 2u);
  EXPECT_NE(outcome[0].retired_message.find("metric 1 was retired at"), std::string::npos)
      << outcome[0].retired_message;
  EXPECT_EQ(store->report_count(1).value(), 3u);
  EXPECT_EQ(estimate_n(*store, kMetric), 3u);  // still readable
  ASSERT_TRUE(store->metric(1));

  // The other collector stores them until it reloads its metrics.
  const Batch late = device_batch(9, 1, 1, 1);
  EXPECT_EQ(insert(*sharing, {&late})[0].inserted, 1u);
  ASSERT_TRUE(sharing->reload_metrics());
  EXPECT_EQ(sharing->retired_at(1).value_or(0), kNow + 60);
  const Batch later = device_batch(10, 1, 1, 1);
  EXPECT_EQ(insert(*sharing, {&later})[0].retired, 1u);

  store.reset();
  sharing.reset();
  auto reopened = open(Store::Mode::kReadOnly);
  EXPECT_EQ(reopened->retired_at(1).value_or(0), kNow + 60);
  EXPECT_FALSE(reopened->retired_at(2));
  EXPECT_EQ(estimate_n(*reopened, kMetric), 4u);
}

// A version-3 database (before retirement and, on PostgreSQL, with one
// unpartitioned reports table) is upgraded on open: its reports move into
// daily partitions, estimates and raw reports agree as before, resends
// are still duplicates, and metrics can be retired.
TEST_P(StoreTest, Version3DatabaseIsUpgradedWithPartitionsAndRetirement) {
  {
    auto store = open();
    ASSERT_TRUE(store->register_metric(kMetric));
    for (int d = 0; d < 3; ++d) {
      const Batch batch = batch_of(7, {{static_cast<uint64_t>(d) * 10 + 1, true},
                                       {static_cast<uint64_t>(d) * 10 + 2, false}});
      insert(*store, {&batch}, kNow - d * kDay);
    }
  }
  backend_->make_version_3(url_);
  auto store = open();
  ASSERT_TRUE(store);
  EXPECT_EQ(store->report_count().value(), 6u);
  auto stored = store->aggregate(kMetric, {});
  auto raw = store->aggregate_from_raw(kMetric, {});
  ASSERT_TRUE(stored && raw);
  EXPECT_EQ(stored->serialize(), raw->serialize());
  if (GetParam() == "postgresql") {
    auto days = store->report_partition_days();
    ASSERT_TRUE(days);
    EXPECT_EQ(days.value(), (std::vector<int64_t>{kToday - 2 * kDay, kToday - kDay, kToday}));
  }
  const Batch resent = batch_of(7, {{21, true}, {22, false}});
  EXPECT_EQ(insert(*store, {&resent}, kNow)[0].duplicates, 2u);
  EXPECT_EQ(store->report_count().value(), 6u);
  ASSERT_TRUE(store->retire_metric(1, kNow));
  store.reset();
  EXPECT_EQ(open()->retired_at(1).value_or(0), kNow);  // reopening is a plain check
}

// ---- day roll-ups ------------------------------------------------------------

// Every mechanism's metric (with hourly buckets) over the 4 days before
// kToday and today: `rounds` groups of 20 devices, each device sending 8
// reports observed (and received) within one hour. Two nodes write.
class RollUpData {
 public:
  RollUpData() : metrics_(blur_test::one_metric_per_mechanism()) {
    for (MetricConfig& metric : metrics_) metric.max_reports_per_bucket = 8;
  }
  const std::vector<MetricConfig>& metrics() const { return metrics_; }
  void register_all(Store& store) const {
    for (const MetricConfig& metric : metrics_) ASSERT_TRUE(store.register_metric(metric));
  }
  // Batches of one group, all received at `at`, observed there.
  std::vector<Batch> group(int64_t at) {
    std::vector<Batch> batches(20);
    for (Batch& batch : batches) {
      batch.sdk_version = 256;
      batch.device_nonce = ++nonce_;
      for (uint64_t id = 1; id <= 8; ++id) {
        IncomingReport r = blur_test::random_report(metrics_[rng_() % metrics_.size()], rng_);
        r.report_id = id;
        r.observed_minute = static_cast<uint32_t>(at / 60);
        batch.reports.push_back(r);
      }
    }
    return batches;
  }
  // Registers the metrics and stores a group observed (and received) at `at`.
  std::vector<Batch> register_and_store(Store& store, int64_t at) {
    register_all(store);
    std::vector<Batch> batches = group(at);
    std::vector<ReceivedBatch> received;
    for (const Batch& b : batches) received.push_back({&b, at});
    EXPECT_TRUE(store.insert(received));
    return batches;
  }
  // A time in the last 4 days or today up to kNow, at random.
  int64_t random_time() {
    return kToday - 4 * 86400 + static_cast<int64_t>(rng_() % (4 * 86400 + kNow - kToday));
  }

 private:
  std::vector<MetricConfig> metrics_;
  std::mt19937_64 rng_{77};
  uint64_t nonce_ = 5000;
};

// The metrics that roll up among those the batches report.
uint64_t rolling_metrics(const std::vector<Batch>& batches, const std::vector<MetricConfig>& all) {
  std::set<uint32_t> ids;
  for (const Batch& b : batches) {
    for (const IncomingReport& r : b.reports) ids.insert(r.metric_id);
  }
  return static_cast<uint64_t>(std::count_if(all.begin(), all.end(), [&](const MetricConfig& m) {
    return rolls_up(m) && ids.count(m.id) != 0;
  }));
}

std::vector<ReceivedBatch> received_at(const std::vector<Batch>& batches, int64_t at) {
  std::vector<ReceivedBatch> received;
  for (const Batch& b : batches) received.push_back({&b, at});
  return received;
}

// Ranges with whole days and edges: what estimates read by day rows and bucket rows.
std::vector<TimeRange> rollup_ranges() {
  return {{},
          {kToday - 3 * 86400, kToday},
          {kToday - 3 * 86400 + 5 * 3600, kToday - 86400 + 7 * 3600},
          {kToday - 2 * 86400 - 3600, INT64_MAX},
          {INT64_MIN, kToday - 86400 + 3600},
          {kToday - 2 * 86400, kToday - 86400}};
}

// The estimate's aggregate equals the raw reports' over every range, every
// day of a daily series equals that day's raw aggregate, and an hourly
// series is bucket rows only.
void expect_aggregates_match_raw(Store& store, const std::vector<MetricConfig>& metrics) {
  for (const MetricConfig& metric : metrics) {
    SCOPED_TRACE(describe(metric));
    for (const TimeRange& range : rollup_ranges()) {
      SCOPED_TRACE("range " + std::to_string(range.from) + " .. " + std::to_string(range.to));
      auto stored = store.aggregate(metric, range);
      auto raw = store.aggregate_from_raw(metric, range);
      ASSERT_TRUE(stored && raw) << (stored ? raw.error().message : stored.error().message);
      EXPECT_EQ(stored->serialize(), raw->serialize());
    }
    for (const int64_t width : {int64_t{86400}, int64_t{3600}}) {
      auto periods = store.period_aggregates(metric, {}, width, true);
      ASSERT_TRUE(periods) << periods.error().message;
      uint64_t buckets = 0;
      for (const PeriodAggregate& period : periods.value()) {
        auto raw = store.aggregate_from_raw(metric, {period.start, period.start + width});
        ASSERT_TRUE(raw);
        EXPECT_EQ(period.aggregate.serialize(), raw->serialize()) << period.start;
        buckets += period.buckets;
      }
      // Each period counts its buckets with reports, rolled up or not.
      uint64_t all_buckets = 0;
      ASSERT_TRUE(store.aggregate(metric, {}, &all_buckets));
      EXPECT_EQ(buckets, all_buckets);
    }
  }
}

TEST_P(StoreTest, DayRollUpsReadTheSameAsBucketRowsAndRawReports) {
  RollUpData data;
  std::vector<std::vector<Batch>> groups;
  for (int node = 0; node < 2; ++node) {
    auto store = open();
    data.register_all(*store);
    for (int round = 0; round < 6; ++round) {
      const int64_t at = data.random_time();
      groups.push_back(data.group(at));
      ASSERT_TRUE(store->insert(received_at(groups.back(), at)));
    }
  }
  auto store = open();
  expect_aggregates_match_raw(*store, data.metrics());
  auto rolled = store->roll_up(kNow);
  ASSERT_TRUE(rolled) << rolled.error().message;
  EXPECT_GT(rolled->days, 0u);
  EXPECT_GE(rolled->bucket_rows, rolled->day_rows);
  expect_aggregates_match_raw(*store, data.metrics());
  // Every closed day is rolled up once: a second pass finds nothing, and
  // today (not closed at kNow) is left to bucket rows.
  EXPECT_EQ(store->roll_up(kNow).value().days, 0u);
  auto tomorrow = store->roll_up(kToday + 86400);
  ASSERT_TRUE(tomorrow);
  EXPECT_GT(tomorrow->days, 0u);
  expect_aggregates_match_raw(*store, data.metrics());
  // Word discovery keeps bucket rows only (sparse, capped rows).
  for (const MetricConfig& metric : data.metrics()) {
    EXPECT_EQ(rolls_up(metric), !mechanism_spec(metric.mechanism).discovers_words);
  }
}

// A report arriving after its day was rolled up updates the writer's
// bucket row and day row in one transaction: counted once whichever rows
// an estimate reads, from this node or another one (which has no day row
// of that day yet).
TEST_P(StoreTest, LateReportsForARolledUpDayAreCountedOnce) {
  RollUpData data;
  const int64_t yesterday = kToday - 86400;
  auto store = open();
  const std::vector<Batch> early = data.register_and_store(*store, yesterday + 5 * 3600);
  ASSERT_EQ(store->roll_up(kNow).value().days, rolling_metrics(early, data.metrics()));
  const TimeRange day{yesterday, kToday};
  std::map<uint32_t, uint64_t> before;
  for (const MetricConfig& m : data.metrics()) before[m.id] = estimate_n(*store, m, day);

  // Late: observed yesterday at 20:00, received now (within the age window);
  // first through this node, then through a second one.
  const std::vector<Batch> late = data.group(yesterday + 20 * 3600);
  ASSERT_TRUE(store->insert(received_at(late, kNow)));
  auto other = open();
  const std::vector<Batch> later = data.group(yesterday + 21 * 3600);
  ASSERT_TRUE(other->insert(received_at(later, kNow)));
  std::map<uint32_t, uint64_t> added;
  for (const auto* batches : {&late, &later}) {
    for (const Batch& b : *batches) {
      for (const IncomingReport& r : b.reports) ++added[r.metric_id];
    }
  }
  for (const MetricConfig& m : data.metrics()) {
    SCOPED_TRACE(describe(m));
    EXPECT_EQ(estimate_n(*store, m, day), before[m.id] + added[m.id]);
    EXPECT_EQ(estimate_n(*store, m, {yesterday + 20 * 3600, kToday}), added[m.id]);
  }
  expect_aggregates_match_raw(*store, data.metrics());
  EXPECT_EQ(store->roll_up(kNow).value().days, 0u);  // still rolled up, once
}

// A writer into a day whose roll-up is in progress (on another connection)
// waits for it, then updates the day row too: its reports are counted once.
// reaggregate rebuilds the buckets of rolled-up days: each such day loses
// its day rows (in the bucket's transaction) and reads its rebuilt bucket
// rows, equal to the raw reports; the next pass rolls the same days again.
TEST_P(StoreTest, ReaggregateOfRolledUpDaysReadsTheRawReportsAndRollsUpAgain) {
  RollUpData data;
  const int64_t yesterday = kToday - 86400;
  auto store = open();
  const std::vector<Batch> early = data.register_and_store(*store, yesterday + 5 * 3600);
  const uint64_t days = rolling_metrics(early, data.metrics());
  ASSERT_EQ(store->roll_up(kNow).value().days, days);
  auto other = open();  // a second node's rows in the same day
  ASSERT_TRUE(other->insert(received_at(data.group(yesterday + 20 * 3600), kNow)));
  for (const MetricConfig& m : data.metrics()) {
    SCOPED_TRACE(describe(m));
    ASSERT_TRUE(store->reaggregate(m));
  }
  expect_aggregates_match_raw(*store, data.metrics());
  EXPECT_EQ(store->roll_up(kNow).value().days, days);
  expect_aggregates_match_raw(*store, data.metrics());
}

TEST_P(StoreTest, AWriteDuringARollUpOfItsDayIsCountedOnce) {
  RollUpData data;
  const int64_t yesterday = kToday - 86400;
  auto store = open();
  const std::vector<Batch> early = data.register_and_store(*store, yesterday + 5 * 3600);
  auto writer = open();
  const std::vector<Batch> late = data.group(yesterday + 20 * 3600);
  std::thread write;
  std::atomic<bool> written{false};
  auto rolled = store->roll_up(kNow, nullptr, [&](const store::MetricDay&) {
    if (write.joinable()) return;  // the first day's transaction only
    write = std::thread([&] {
      EXPECT_TRUE(writer->insert(received_at(late, kNow)));
      written = true;
    });
    // Give the write time to reach the day's lock (it must not pass it).
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_FALSE(written.load());
  });
  ASSERT_TRUE(rolled) << rolled.error().message;
  write.join();
  EXPECT_TRUE(written.load());
  expect_aggregates_match_raw(*store, data.metrics());
}

// kill -9 in the middle of a roll-up (its second day's rows written, not
// committed): the first day stays rolled up, the second is not, nothing is
// lost or counted twice, and the next pass finishes the work.
TEST_P(StoreTest, KillDuringARollUpLosesAndDoubleCountsNothing) {
  RollUpData data;
  {
    auto store = open();
    data.register_all(*store);
    for (int round = 0; round < 8; ++round) {
      const int64_t at = data.random_time();
      const std::vector<Batch> batches = data.group(at);
      ASSERT_TRUE(store->insert(received_at(batches, at)));
    }
  }
  std::fflush(nullptr);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto store = Store::open(url_, Store::Mode::kReadWrite);
    if (!store) _exit(3);
    int days = 0;
    (void)(*store)->roll_up(kNow, nullptr, [&](const store::MetricDay&) {
      if (++days == 2) raise(SIGKILL);
    });
    _exit(4);  // never here: there are more than 2 days to roll up
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;
  auto store = open();
  expect_aggregates_match_raw(*store, data.metrics());
  uint64_t closed_days = 0;
  for (const MetricConfig& metric : data.metrics()) {
    if (!rolls_up(metric)) continue;
    auto periods = store->period_aggregates(metric, {INT64_MIN, kToday}, 86400, false);
    ASSERT_TRUE(periods);
    closed_days += periods->size();
  }
  auto rest = store->roll_up(kNow);
  ASSERT_TRUE(rest) << rest.error().message;
  EXPECT_EQ(rest->days, closed_days - 1);  // the first day's commit survived
  expect_aggregates_match_raw(*store, data.metrics());
}

TEST_P(StoreTest, Version3DatabaseIsUpgradedWithEmptyDayRows) {
  RollUpData data;
  const int64_t yesterday = kToday - 86400;
  const std::vector<Batch> batches = data.group(yesterday + 3600);
  {
    auto store = open();
    data.register_all(*store);
    ASSERT_TRUE(store->insert(received_at(batches, yesterday + 3600)));
  }
  backend_->make_version_3(url_);
  auto store = open();
  ASSERT_TRUE(store);
  expect_aggregates_match_raw(*store, data.metrics());
  auto rolled = store->roll_up(kNow);
  ASSERT_TRUE(rolled) << rolled.error().message;
  EXPECT_EQ(rolled->days, rolling_metrics(batches, data.metrics()));
  expect_aggregates_match_raw(*store, data.metrics());
  // Upgraded to this version: reopening is a plain check, the day rows kept.
  store.reset();
  store = open();
  EXPECT_EQ(store->roll_up(kNow).value().days, 0u);
  expect_aggregates_match_raw(*store, data.metrics());
}

// A version-4 database (count tables keyed metric first) is upgraded on
// open: the count tables keyed period first and device before metric, every
// count kept, so both bounds hold across the upgrade.
TEST_P(StoreTest, Version4DatabaseIsUpgradedWithPeriodFirstKeys) {
  MetricConfig metric = kMetric;
  metric.max_reports_per_bucket = 3;
  metric.max_reports_per_day = 5;
  {
    auto store = open();
    ASSERT_TRUE(store->register_metric(metric));
    const Batch first = device_batch(7, 1, 1, 2);
    const Batch other_bucket = device_batch(7, 1, 10, 2, 2);
    insert(*store, {&first, &other_bucket});
  }
  EXPECT_EQ(backend_->primary_key(url_, "report_counts"), "bucket_start,device_nonce,metric_id");
  backend_->make_version_4(url_);
  ASSERT_EQ(backend_->primary_key(url_, "report_counts"), "metric_id,bucket_start,device_nonce");
  auto store = open();
  ASSERT_TRUE(store);
  EXPECT_EQ(backend_->primary_key(url_, "report_counts"), "bucket_start,device_nonce,metric_id");
  EXPECT_EQ(backend_->primary_key(url_, "receive_counts"), "day_start,device_nonce,metric_id");
  EXPECT_EQ(store->receive_day_count(1, kToday, 7).value(), 4u);
  // The bucket's count (2 of 3) and the day's (4 of 5) survived: of three
  // more reports in the first bucket, one fits.
  const Batch more = device_batch(7, 1, 20, 3);
  const auto outcome = insert(*store, {&more});
  EXPECT_EQ(outcome[0].inserted, 1u);
  EXPECT_EQ(outcome[0].over_limit, 2u);
  EXPECT_EQ(store->receive_day_count(1, kToday, 7).value(), 5u);
  EXPECT_EQ(estimate_n(*store, metric), 5u);
  // The raw reports were kept, and are still found by their key: a resent
  // batch is a duplicate, not new reports.
  EXPECT_EQ(store->report_count(1).value(), 5u);
  const Batch resent = device_batch(7, 1, 1, 2);
  const auto again = insert(*store, {&resent});
  EXPECT_EQ(again[0].duplicates, 2u);
  EXPECT_EQ(again[0].inserted, 0u);
  EXPECT_EQ(store->report_count(1).value(), 5u);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, ::testing::Values("sqlite", "postgresql"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           return param.param;
                         });

TEST(StoreOpen, BadUrlsAreClearErrors) {
  auto unknown = Store::open("mysql://localhost/blur", Store::Mode::kReadWrite);
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("unknown database URL"), std::string::npos);
  auto unopenable = Store::open("/nonexistent-dir/blur.db", Store::Mode::kReadWrite);
  ASSERT_FALSE(unopenable);
  EXPECT_NE(unopenable.error().message.find("/nonexistent-dir/blur.db"), std::string::npos);
}

}  // namespace
