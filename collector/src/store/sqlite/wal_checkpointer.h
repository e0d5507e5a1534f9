// Checkpoints of an SQLite file's write-ahead log off the writer's thread.
//
// SQLite's own autocheckpoint runs inside the commit that passes 1,000 WAL
// pages: the writer copies pages into the main file and fsyncs it before
// it answers its batches (a fifth of the collector's CPU under 16-metric
// device batches, and an fsync, on the one writer thread). Instead each
// connection's commit hook wakes this thread past kBackgroundPages, and
// the thread runs a PASSIVE checkpoint on its own connection (the writer
// goes on appending meanwhile; SQLite restarts the log from its start
// once a checkpoint has caught up). Only if the log still reaches
// kInlinePages (the thread cannot keep up) does the committing connection
// checkpoint itself, as before. Crash safety is SQLite's: a checkpoint
// syncs the log before it copies and the file before the log is reused.
#ifndef BLUR_COLLECTOR_STORE_SQLITE_WAL_CHECKPOINTER_H
#define BLUR_COLLECTOR_STORE_SQLITE_WAL_CHECKPOINTER_H

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

struct sqlite3;

namespace blur::collector::store {

class WalCheckpointer {
 public:
  // Log pages (4 KiB) after which the thread checkpoints, and after which
  // the committing connection does (SQLite's default autocheckpoint: 1,000).
  static constexpr int kBackgroundPages = 4096;
  static constexpr int kInlinePages = 65536;

  explicit WalCheckpointer(std::string path) : path_(std::move(path)) {}
  ~WalCheckpointer();  // stops the thread (a checkpoint under way finishes)
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  // Replaces `db`'s autocheckpoint with this. `db` must be closed before
  // this object is destroyed.
  void attach(sqlite3* db);

  // Checkpoints done by the thread, for tests and logs.
  unsigned long long background_checkpoints() const;

 private:
  static int on_commit(void* self, sqlite3* db, const char* schema, int pages);
  void request();
  void run();

  const std::string path_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool requested_ = false;
  bool stopping_ = false;
  unsigned long long done_ = 0;
  std::thread thread_;  // started at the first request
};

}  // namespace blur::collector::store

#endif  // BLUR_COLLECTOR_STORE_SQLITE_WAL_CHECKPOINTER_H
