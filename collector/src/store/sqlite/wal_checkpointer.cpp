#include "store/sqlite/wal_checkpointer.h"

#include <sqlite3.h>

namespace blur::collector::store {

WalCheckpointer::~WalCheckpointer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void WalCheckpointer::attach(sqlite3* db) { sqlite3_wal_hook(db, &WalCheckpointer::on_commit, this); }

unsigned long long WalCheckpointer::background_checkpoints() const {
  std::lock_guard lock(mutex_);
  return done_;
}

int WalCheckpointer::on_commit(void* self, sqlite3* db, const char* schema, int pages) {
  if (pages >= kInlinePages) {
    // SQLite's autocheckpoint, which this hook replaces; a busy or failed
    // checkpoint is retried at the next commit, as SQLite's own is.
    sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
  } else if (pages >= kBackgroundPages) {
    static_cast<WalCheckpointer*>(self)->request();
  }
  return SQLITE_OK;
}

void WalCheckpointer::request() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    requested_ = true;
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  }
  wake_.notify_one();
}

void WalCheckpointer::run() {
  sqlite3* db = nullptr;
  // Its own connection, synced like the writer's (a checkpoint's syncs
  // follow the connection that runs it).
  if (sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) !=
          SQLITE_OK ||
      sqlite3_exec(db, "PRAGMA synchronous=FULL", nullptr, nullptr, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    db = nullptr;  // the writers' inline checkpoints remain
  }
  std::unique_lock lock(mutex_);
  while (db != nullptr) {
    wake_.wait(lock, [this] { return requested_ || stopping_; });
    if (stopping_) break;
    requested_ = false;
    lock.unlock();
    const int status =
        sqlite3_wal_checkpoint_v2(db, "main", SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    lock.lock();
    if (status == SQLITE_OK) ++done_;
  }
  lock.unlock();
  sqlite3_close(db);
}

}  // namespace blur::collector::store
