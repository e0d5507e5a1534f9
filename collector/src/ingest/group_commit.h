// Group commit: batches that arrive while a commit is in flight share the
// next transaction and its fsync. Each batch's callback runs only after the
// commit that holds it (or its failure), on the committer's thread, so the
// HTTP layer acknowledges nothing that could still be lost.
//
// One writer thread per store. A group holds at most one batch per device
// nonce (a resend of a batch still waiting goes to the next group), so the
// store never sees the same key twice in one transaction.
#ifndef BLUR_COLLECTOR_INGEST_GROUP_COMMIT_H
#define BLUR_COLLECTOR_INGEST_GROUP_COMMIT_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "ingest/batch.h"
#include "store/store.h"

namespace blur::collector {

class GroupCommitter {
 public:
  struct Options {
    size_t max_batches = 1024;   // per transaction
    size_t max_reports = 32768;  // per transaction
    // Optional, for metrics: after each transaction, on the writer thread,
    // its duration, the reports it held and whether it committed.
    std::function<void(std::chrono::nanoseconds duration, size_t reports, bool committed)>
        on_commit;
  };
  using Callback = std::function<void(const Outcome<BatchOutcome>&)>;

  GroupCommitter(Store& store, Options options);
  explicit GroupCommitter(Store& store) : GroupCommitter(store, Options{}) {}
  ~GroupCommitter();  // stop()
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Queues a validated batch; `done` runs once, after its commit or failure.
  // After stop(), answers kUnavailable at once.
  void submit(std::shared_ptr<const Batch> batch, int64_t received_at, Callback done);

  // Commits everything queued, then ends the writer thread.
  void stop();

  struct Stats {
    uint64_t commits = 0;
    uint64_t batches = 0;
    uint64_t reports = 0;
    // Reports refused by the contribution bound (BatchOutcome::over_limit):
    // a steady rise means a device, or someone posing as many, posts too much.
    uint64_t over_limit = 0;
  };
  Stats stats() const;

 private:
  struct Pending {
    std::shared_ptr<const Batch> batch;
    int64_t received_at;
    Callback done;
  };
  void run();

  Store& store_;
  const Options options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Pending> queue_;
  bool stopping_ = false;
  Stats stats_;
  std::thread writer_;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_INGEST_GROUP_COMMIT_H
