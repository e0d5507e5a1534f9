#include "ingest/group_commit.h"

#include <string>
#include <vector>

namespace blur::collector {

namespace {

// A failed commit as its batches' senders see it: the store's words (a
// path, the database's message) are for the operator's log (on_commit,
// observe/write_health.h), not for devices.
Error for_devices(const Error& store_error) {
  if (store_error.kind == Error::Kind::kInvalid) return store_error;
  return unavailable("the collector could not store the batch; retry later");
}

}  // namespace

namespace {

// Retry-After 1: a batch in flight is answered within a commit or two.
Error device_busy() {
  return Error{Error::Kind::kTooManyRequests,
               "another batch of this device is still being committed; send the next one after "
               "its answer",
               1};
}

}  // namespace

GroupCommitter::GroupCommitter(Store& store, Options options)
    : store_(store),
      options_(options),
      commit_sync_(store.commit_sync()),
      writer_([this] { run(); }) {
  if (commit_sync_) syncer_ = std::thread([this] { run_syncer(); });
}

GroupCommitter::~GroupCommitter() { stop(); }

void GroupCommitter::submit(std::shared_ptr<const Batch> batch, int64_t received_at,
                            Callback done) {
  const size_t size = batch->reports.size();
  enum class Refusal { kStopping, kDeviceBusy, kQueueFull } refusal;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) {
      refusal = Refusal::kStopping;
    } else if (in_flight_.count(batch->device_nonce) != 0) {
      refusal = Refusal::kDeviceBusy;
      ++stats_.device_busy;
    } else if (queued_reports_ != 0 && queued_reports_ + size > options_.max_queued_reports) {
      refusal = Refusal::kQueueFull;
      ++stats_.queue_full;
    } else {
      in_flight_.insert(batch->device_nonce);
      queue_.push_back({std::move(batch), received_at, std::move(done)});
      queued_reports_ += size;
      wake_.notify_one();
      return;
    }
  }
  // Answered outside the lock: `done` may take its time.
  switch (refusal) {
    case Refusal::kStopping:
      return done(unavailable("the collector is shutting down; retry later"));
    case Refusal::kDeviceBusy:
      return done(device_busy());
    case Refusal::kQueueFull:
      break;
  }
  done(unavailable("the commit queue is full (at most " +
                   std::to_string(options_.max_queued_reports) +
                   " reports wait for the database); retry later"));
}

std::optional<Error> GroupCommitter::busy(uint64_t device_nonce) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (in_flight_.count(device_nonce) == 0) return std::nullopt;
  ++stats_.device_busy;
  return device_busy();
}

void GroupCommitter::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    wake_.notify_one();
  }
  if (writer_.joinable()) writer_.join();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    writer_done_ = true;
    wake_syncer_.notify_one();
  }
  if (syncer_.joinable()) syncer_.join();
}

GroupCommitter::Stats GroupCommitter::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Stats stats = stats_;
  stats.queued_reports = queued_reports_;
  stats.queued_batches = queue_.size();
  stats.devices_in_flight = in_flight_.size();
  return stats;
}

void GroupCommitter::run() {
  std::vector<Pending> group;
  std::vector<ReceivedBatch> batches;
  for (;;) {
    group.clear();
    batches.clear();
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything is committed
      // Everything waiting joins this group, in order, within the limits
      // (one batch per nonce in flight: no nonce twice); the rest waits for
      // the next group.
      size_t reports = 0;
      while (!queue_.empty() && group.size() < options_.max_batches) {
        const size_t size = queue_.front().batch->reports.size();
        if (!group.empty() && reports + size > options_.max_reports) break;
        reports += size;
        queued_reports_ -= size;
        group.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    size_t group_reports = 0;
    for (const Pending& pending : group) {
      batches.push_back({pending.batch.get(), pending.received_at});
      group_reports += pending.batch->reports.size();
    }
    const auto started = std::chrono::steady_clock::now();
    // Pipelined when the store can sync later: committed lazily, answered by
    // the syncer once durable, while this thread commits the next group.
    Outcome<std::vector<BatchOutcome>> outcomes = store_.insert(batches, commit_sync_ != nullptr);
    if (options_.on_commit) {
      options_.on_commit(std::chrono::steady_clock::now() - started, group_reports,
                         outcomes ? done() : Fallible(outcomes.error()));
    }
    if (outcomes) {
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.commits;
      stats_.batches += group.size();
      stats_.reports += group_reports;
      for (const BatchOutcome& outcome : outcomes.value()) {
        stats_.over_limit += outcome.over_limit;
      }
      if (commit_sync_) {
        unsynced_.push_back({std::move(group), std::move(outcomes).value()});
        wake_syncer_.notify_one();
        continue;
      }
    }
    answer(group, outcomes);
  }
}

void GroupCommitter::run_syncer() {
  std::vector<Unsynced> synced;
  for (;;) {
    synced.clear();
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_syncer_.wait(lock, [this] { return writer_done_ || !unsynced_.empty(); });
      if (unsynced_.empty()) return;  // the writer has ended, everything answered
      synced.swap(unsynced_);
    }
    // One sync for every group committed so far. If it fails, whether they
    // reached the disk is unknown: their senders are told to retry, and a
    // resent report that was stored is then a duplicate, never counted twice.
    const Fallible durable = commit_sync_->sync();
    for (Unsynced& unsynced : synced) {
      if (durable) {
        answer(unsynced.group, std::move(unsynced.outcomes));
      } else {
        answer(unsynced.group, durable.error());
      }
    }
  }
}

void GroupCommitter::answer(std::vector<Pending>& group,
                            const Outcome<std::vector<BatchOutcome>>& outcomes) {
  {
    // Before the answers: a device that sends its next batch as soon as it
    // has this one's answer finds its slot free.
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Pending& pending : group) in_flight_.erase(pending.batch->device_nonce);
  }
  for (size_t i = 0; i < group.size(); ++i) {
    if (outcomes) {
      group[i].done(outcomes.value()[i]);
    } else {
      group[i].done(for_devices(outcomes.error()));
    }
  }
}

}  // namespace blur::collector
