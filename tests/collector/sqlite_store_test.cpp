#include "store/sqlite_store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "incoming_reports.h"

namespace {

using namespace blur::collector;

struct TempDatabase {
  TempDatabase() {
    char pattern[] = "/tmp/blur-store-test-XXXXXX";
    dir = mkdtemp(pattern);
    path = dir + "/blur.db";
  }
  ~TempDatabase() { std::system(("rm -rf " + dir).c_str()); }
  std::string dir, path;
};

Batch batch_of(uint64_t nonce, std::initializer_list<std::pair<uint64_t, bool>> reports) {
  Batch batch;
  batch.sdk_version = 256;
  batch.device_nonce = nonce;
  for (const auto& [id, bit] : reports) batch.reports.push_back(blur_test::binary_report(id, bit));
  return batch;
}

const MetricConfig kMetric{1, MechanismId::kBinaryRandomizedResponse, 1000000, 2};

TEST(SqliteStore, StoresDurablyInWalModeAndSurvivesReopen) {
  TempDatabase db;
  std::string error;
  {
    auto store = SqliteStore::open(db.path, &error);
    ASSERT_TRUE(store) << error;
    ASSERT_TRUE(store->register_metric(kMetric, &error)) << error;
    SqliteStore::InsertResult result;
    ASSERT_TRUE(store->insert_batch(batch_of(~0ull, {{0, true}, {1, false}, {~0ull, true}}),
                                    &result, &error));
    EXPECT_EQ(result.inserted, 3u);
  }
  auto store = SqliteStore::open(db.path, &error);
  ASSERT_TRUE(store) << error;
  EXPECT_EQ(store->metric(1).value(), kMetric);
  uint64_t counts[2] = {};
  store->for_each_payload(1, [&](int64_t value, const std::string& bits, uint64_t count) {
    ASSERT_LT(value, 2u);
    EXPECT_TRUE(bits.empty());
    counts[value] = count;
  });
  EXPECT_EQ(counts[0], 1u);
  EXPECT_EQ(counts[1], 2u);

  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(db.path.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(raw, "PRAGMA journal_mode", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0))), "wal");
  sqlite3_finalize(stmt);
  sqlite3_close(raw);
}

// A device that did not get its acknowledgement sends the batch again:
// nothing is counted twice.
TEST(SqliteStore, RetriedBatchesAreIdempotent) {
  TempDatabase db;
  std::string error;
  auto store = SqliteStore::open(db.path, &error);
  ASSERT_TRUE(store) << error;
  ASSERT_TRUE(store->register_metric(kMetric, &error));
  SqliteStore::InsertResult result;
  ASSERT_TRUE(store->insert_batch(batch_of(5, {{0, true}, {1, true}}), &result, &error));
  ASSERT_TRUE(store->insert_batch(batch_of(5, {{1, true}, {2, false}}), &result, &error));
  EXPECT_EQ(result.inserted, 1u);
  EXPECT_EQ(result.duplicates, 1u);
  ASSERT_TRUE(store->insert_batch(batch_of(6, {{0, true}}), &result, &error));  // other device
  EXPECT_EQ(result.inserted, 1u);
  EXPECT_EQ(store->report_count(), 4u);
}

TEST(SqliteStore, RefusesToChangeARegisteredMetric) {
  TempDatabase db;
  std::string error;
  auto store = SqliteStore::open(db.path, &error);
  ASSERT_TRUE(store) << error;
  ASSERT_TRUE(store->register_metric(kMetric, &error));
  EXPECT_TRUE(store->register_metric(kMetric, &error));  // identical: fine
  MetricConfig changed = kMetric;
  changed.epsilon_micros = 2000000;
  EXPECT_FALSE(store->register_metric(changed, &error));
  EXPECT_NE(error.find("already registered"), std::string::npos) << error;
  EXPECT_EQ(store->metric(1)->epsilon_micros, 1000000u);
}

TEST(SqliteStore, UnopenableDatabaseIsAClearError) {
  std::string error;
  EXPECT_FALSE(SqliteStore::open("/nonexistent-dir/blur.db", &error));
  EXPECT_NE(error.find("cannot open database /nonexistent-dir/blur.db"), std::string::npos)
      << error;
}

}  // namespace
