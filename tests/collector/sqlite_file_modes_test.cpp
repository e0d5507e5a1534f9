// The SQLite store's files are its user's only: the database, its -wal and
// its -shm are created 0600 whatever the umask leaves, and files an earlier
// version left 0644 are tightened when the store opens them.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "store/store.h"

namespace {

using namespace blur::collector;

const MetricConfig kMetric{1, MechanismId::kBinaryRandomizedResponse, 1000000, 2};

class SqliteFileModes : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/blur-file-modes-XXXXXX";
    dir_ = mkdtemp(pattern);
    path_ = dir_ + "/blur.db";
    old_umask_ = umask(022);  // the usual one: files 0644 unless asked otherwise
  }
  void TearDown() override {
    umask(old_umask_);
    std::system(("rm -rf " + dir_).c_str());
  }
  // The permission bits of `file`, or -1 if it does not exist.
  static int mode_of(const std::string& file) {
    struct stat info {};
    return stat(file.c_str(), &info) == 0 ? static_cast<int>(info.st_mode & 0777) : -1;
  }
  void expect_private(const char* when) {
    for (const std::string& file : {path_, path_ + "-wal", path_ + "-shm"}) {
      std::printf("%s: %s mode %04o\n", when, file.substr(dir_.size()).c_str(), mode_of(file));
      EXPECT_EQ(mode_of(file), 0600) << when << ": " << file;
    }
  }
  std::string dir_, path_;
  mode_t old_umask_ = 0;
};

TEST_F(SqliteFileModes, ANewDatabaseAndItsWalAndShmAre0600) {
  auto store = Store::open(path_, Store::Mode::kReadWrite);
  ASSERT_TRUE(store) << store.error().message;
  ASSERT_TRUE((*store)->register_metric(kMetric));
  // The store's connection is open: WAL mode keeps -wal and -shm beside it.
  expect_private("new database");
}

TEST_F(SqliteFileModes, FilesAnEarlierVersionLeftReadableAreTightened) {
  // A database as SQLite makes it by default (0644 under umask 022), in WAL
  // mode, with a connection holding -wal and -shm open.
  sqlite3* earlier = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &earlier), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(earlier,
                         "PRAGMA journal_mode=WAL; CREATE TABLE t (x); INSERT INTO t "
                         "VALUES (1);",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  for (const std::string& file : {path_, path_ + "-wal", path_ + "-shm"}) {
    ASSERT_EQ(mode_of(file), 0644) << file;
  }
  auto store = Store::open(path_, Store::Mode::kReadWrite);
  ASSERT_TRUE(store) << store.error().message;
  expect_private("earlier database");
  sqlite3_close(earlier);
}

TEST_F(SqliteFileModes, AReadOnlyOpenCreatesNothingReadable) {
  // The offline tools (estimate, series) open read-only; the first open of
  // a missing path still creates the database, 0600 as well.
  auto store = Store::open("sqlite:" + path_, Store::Mode::kReadOnly);
  ASSERT_TRUE(store) << store.error().message;
  EXPECT_EQ(mode_of(path_), 0600);
}

}  // namespace
