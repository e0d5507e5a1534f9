// The SQLite write-ahead log's checkpoints off the writer's thread
// (store/sqlite/wal_checkpointer.h): past kBackgroundPages of log the
// thread checkpoints (the pages reach the main file without the committing
// connection doing it), below that nobody does, and every committed row is
// readable from a fresh connection after the checkpointer is gone.
#include "store/sqlite/wal_checkpointer.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

using blur::collector::store::WalCheckpointer;

class WalCheckpointerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/blur-wal-checkpointer-XXXXXX";
    dir_ = mkdtemp(pattern);
    path_ = dir_ + "/test.db";
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  sqlite3* open() {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    EXPECT_EQ(sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL", nullptr,
                           nullptr, nullptr),
              SQLITE_OK);
    return db;
  }
  // Commits `commits` transactions of 100 rows of 3,500 bytes (a page each).
  static void write(sqlite3* db, int commits, int* next_id) {
    for (int c = 0; c < commits; ++c) {
      std::string sql = "BEGIN;";
      for (int r = 0; r < 100; ++r) {
        sql += "INSERT INTO t VALUES (" + std::to_string((*next_id)++) + ", zeroblob(3500));";
      }
      sql += "COMMIT;";
      ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    }
  }
  off_t main_file_size() const {
    struct stat s {};
    return stat(path_.c_str(), &s) == 0 ? s.st_size : -1;
  }
  static long long count(sqlite3* db) {
    sqlite3_stmt* s = nullptr;
    sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &s, nullptr);
    long long n = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;
    sqlite3_finalize(s);
    return n;
  }

  std::string dir_, path_;
};

TEST_F(WalCheckpointerTest, TheThreadCheckpointsPastItsThresholdAndNothingIsLost) {
  int next_id = 0;
  long long written = 0;
  {
    WalCheckpointer checkpointer(path_);
    sqlite3* db = open();
    ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB)", nullptr, nullptr,
                           nullptr),
              SQLITE_OK);
    checkpointer.attach(db);
    const off_t empty = main_file_size();
    // Well below kBackgroundPages: no checkpoint by anyone (SQLite's
    // autocheckpoint at 1,000 pages is replaced), the main file unchanged.
    write(db, 5, &next_id);  // ~500 pages
    EXPECT_EQ(checkpointer.background_checkpoints(), 0u);
    EXPECT_EQ(main_file_size(), empty);
    // Past it (~1.5 x kBackgroundPages of 4 KiB pages): the thread checkpoints.
    write(db, WalCheckpointer::kBackgroundPages * 3 / 200, &next_id);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (checkpointer.background_checkpoints() == 0 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_GE(checkpointer.background_checkpoints(), 1u);
    EXPECT_GT(main_file_size(), empty + 4000 * 4096) << "the pages did not reach the main file";
    written = count(db);
    sqlite3_close(db);
  }  // the checkpointer stops with a request possibly pending
  EXPECT_EQ(written, next_id);
  sqlite3* reader = open();
  EXPECT_EQ(count(reader), next_id);
  sqlite3_close(reader);
}

TEST_F(WalCheckpointerTest, StopsCleanlyWithoutEverStarting) {
  WalCheckpointer checkpointer(path_);
  EXPECT_EQ(checkpointer.background_checkpoints(), 0u);
}

}  // namespace
