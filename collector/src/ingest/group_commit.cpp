#include "ingest/group_commit.h"

#include <string>
#include <unordered_set>
#include <vector>

namespace blur::collector {

GroupCommitter::GroupCommitter(Store& store, Options options)
    : store_(store), options_(options), writer_([this] { run(); }) {}

GroupCommitter::~GroupCommitter() { stop(); }

void GroupCommitter::submit(std::shared_ptr<const Batch> batch, int64_t received_at,
                            Callback done) {
  const size_t size = batch->reports.size();
  bool stopping = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping = stopping_;
    if (!stopping &&
        (queued_reports_ == 0 || queued_reports_ + size <= options_.max_queued_reports)) {
      queue_.push_back({std::move(batch), received_at, std::move(done)});
      queued_reports_ += size;
      wake_.notify_one();
      return;
    }
    if (!stopping) ++stats_.queue_full;
  }
  // Answered outside the lock: `done` may take its time.
  if (stopping) return done(unavailable("the collector is shutting down; retry later"));
  done(unavailable("the commit queue is full (at most " +
                   std::to_string(options_.max_queued_reports) +
                   " reports wait for the database); retry later"));
}

void GroupCommitter::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    wake_.notify_one();
  }
  if (writer_.joinable()) writer_.join();
}

GroupCommitter::Stats GroupCommitter::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Stats stats = stats_;
  stats.queued_reports = queued_reports_;
  return stats;
}

void GroupCommitter::run() {
  std::vector<Pending> group;
  std::vector<ReceivedBatch> batches;
  std::unordered_set<uint64_t> nonces;
  for (;;) {
    group.clear();
    batches.clear();
    nonces.clear();
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything is committed
      // Everything waiting joins this group, within the limits, one batch
      // per device nonce; the rest keeps its order for the next group.
      size_t reports = 0;
      for (auto it = queue_.begin(); it != queue_.end() && group.size() < options_.max_batches;) {
        const size_t size = it->batch->reports.size();
        if (!group.empty() && reports + size > options_.max_reports) break;
        if (!nonces.insert(it->batch->device_nonce).second) {
          ++it;
          continue;
        }
        reports += size;
        queued_reports_ -= size;
        group.push_back(std::move(*it));
        it = queue_.erase(it);
      }
    }
    size_t group_reports = 0;
    for (const Pending& pending : group) {
      batches.push_back({pending.batch.get(), pending.received_at});
      group_reports += pending.batch->reports.size();
    }
    const auto started = std::chrono::steady_clock::now();
    const Outcome<std::vector<BatchOutcome>> outcomes = store_.insert(batches);
    if (options_.on_commit) {
      options_.on_commit(std::chrono::steady_clock::now() - started, group_reports,
                         outcomes ? done() : Fallible(outcomes.error()));
    }
    if (outcomes) {
      std::lock_guard<std::mutex> lock(mutex_);
      ++stats_.commits;
      stats_.batches += group.size();
      stats_.reports += group_reports;
      for (const BatchOutcome& outcome : outcomes.value()) stats_.over_limit += outcome.over_limit;
    }
    for (size_t i = 0; i < group.size(); ++i) {
      if (outcomes) {
        group[i].done(outcomes.value()[i]);
      } else {
        group[i].done(outcomes.error());
      }
    }
  }
}

}  // namespace blur::collector
