// Group commit: batches that arrive while a commit is in flight share the
// next transaction and its fsync. Each batch's callback runs only after the
// commit that holds it (or its failure), on the committer's thread, so the
// HTTP layer acknowledges nothing that could still be lost.
//
// One writer thread per store. At most one batch per device nonce is in
// flight (queued or committing): submit() refuses another at once
// (kTooManyRequests, "device busy") until the first one's callback runs. So
// one device holds at most one place in the queue, whose FIFO then serves
// devices in turn, however many connections a device opens; and a group
// never holds the same nonce twice, so the store never sees the same key
// twice in one transaction.
//
// The queue is bounded (Options::max_queued_reports): a store slower than
// the clients makes them retry later (503) instead of filling the memory
// with batches whose answers come later and later.
#ifndef BLUR_COLLECTOR_INGEST_GROUP_COMMIT_H
#define BLUR_COLLECTOR_INGEST_GROUP_COMMIT_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>

#include "model/incoming_report.h"
#include "store/store.h"
#include "util/keyed_hash.h"

namespace blur::collector {

class GroupCommitter {
 public:
  struct Options {
    size_t max_batches = 1024;   // per transaction
    size_t max_reports = 32768;  // per transaction
    // Reports waiting for the writer, in all batches. Counted in reports,
    // not batches: a batch holds 1 to 64 of them, and the memory held and
    // the time to commit what waits go by reports. Past it, submit()
    // answers kUnavailable at once; a batch is always taken when nothing
    // waits, however large. The default, two transactions' worth, keeps a
    // batch from waiting for more than the transaction in flight and two
    // more (memory: a few hundred bytes per report, ~40 MB at most).
    size_t max_queued_reports = 2 * 32768;
    // Optional, for metrics and the operator's log: after each transaction,
    // on the writer thread, its duration, the reports it held and whether
    // it committed (the store's error if not).
    std::function<void(std::chrono::nanoseconds duration, size_t reports, const Fallible& result)>
        on_commit;
  };
  using Callback = std::function<void(const Outcome<BatchOutcome>&)>;

  GroupCommitter(Store& store, Options options);
  explicit GroupCommitter(Store& store) : GroupCommitter(store, Options{}) {}
  ~GroupCommitter();  // stop()
  GroupCommitter(const GroupCommitter&) = delete;
  GroupCommitter& operator=(const GroupCommitter&) = delete;

  // Queues a validated batch; `done` runs once, after its commit or failure.
  // When the queue is full or after stop(), `done` runs at once, on this
  // thread, with kUnavailable; while another batch of the same device nonce
  // is in flight, at once with kTooManyRequests (retry_after_seconds 1: a
  // batch in flight is answered within a commit or two). The nonce's slot is
  // free again before its batch's `done` runs, so a device that resends
  // once answered is never refused.
  void submit(std::shared_ptr<const Batch> batch, int64_t received_at, Callback done);

  // The refusal submit() would give a batch of `device_nonce` now
  // (kTooManyRequests, counted in Stats::device_busy) if another of its
  // batches is in flight; nullopt otherwise. Lets a caller refuse before
  // decoding a batch whose device it already knows.
  std::optional<Error> busy(uint64_t device_nonce);

  // Commits everything queued, then ends the writer thread.
  void stop();

  struct Stats {
    uint64_t commits = 0;
    uint64_t batches = 0;
    uint64_t reports = 0;
    // Reports refused by the contribution bound (BatchOutcome::over_limit):
    // a steady rise means a device, or someone posing as many, posts too much.
    uint64_t over_limit = 0;
    // Batches refused because the queue was full.
    uint64_t queue_full = 0;
    // Batches refused because another batch of their device was in flight.
    uint64_t device_busy = 0;
    // Now (not totals): reports and batches waiting for the writer, and
    // devices with a batch in flight (waiting or being committed).
    uint64_t queued_reports = 0;
    uint64_t queued_batches = 0;
    uint64_t devices_in_flight = 0;
  };
  Stats stats() const;

 private:
  struct Pending {
    std::shared_ptr<const Batch> batch;
    int64_t received_at;
    Callback done;
  };
  // A committed group whose commit is not yet known to be durable.
  struct Unsynced {
    std::vector<Pending> group;
    std::vector<BatchOutcome> outcomes;
  };
  void run();
  // The pipelined commit's second stage (when the store has a commit_sync):
  // syncs every group committed so far in one step, then answers them, while
  // run() commits the next group.
  void run_syncer();
  // Frees the group's device slots, then answers each batch.
  void answer(std::vector<Pending>& group, const Outcome<std::vector<BatchOutcome>>& outcomes);

  Store& store_;
  const Options options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Pending> queue_;
  size_t queued_reports_ = 0;  // in queue_
  // The device nonces of the batches in queue_ and in the group being
  // committed: one entry per batch, so at most one batch per nonce.
  std::unordered_set<uint64_t, KeyedHash> in_flight_;
  bool stopping_ = false;
  Stats stats_;
  const std::shared_ptr<store::CommitSync> commit_sync_;  // null: insert() is durable
  std::vector<Unsynced> unsynced_;                        // guarded by mutex_
  std::condition_variable wake_syncer_;
  bool writer_done_ = false;
  std::thread writer_;
  std::thread syncer_;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_INGEST_GROUP_COMMIT_H
