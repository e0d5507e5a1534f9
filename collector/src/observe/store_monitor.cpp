#include "observe/store_monitor.h"

#include <algorithm>

namespace blur::collector::observe {

StoreMonitor::StoreMonitor(Store& store, Gauge* size, Options options, WriteHealth* writes,
                           Gauge* new_devices)
    : store_(store), size_(size), writes_(writes), new_devices_(new_devices), options_(options) {
  query_thread_ = std::thread([this] { run_queries(); });
  deadline_thread_ = std::thread([this] { answer_late_checks(); });
}

StoreMonitor::~StoreMonitor() { stop(); }

void StoreMonitor::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_queries_.notify_all();
  wake_deadlines_.notify_all();
  if (deadline_thread_.joinable()) deadline_thread_.join();
  if (query_thread_.joinable()) query_thread_.join();
  std::unique_lock<std::mutex> lock(mutex_);
  answer(
      lock, [](const Check&) { return true; }, unavailable("the collector is stopping"));
}

void StoreMonitor::check_ready(std::function<void(const Fallible&)> done) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!stopping_) {
      checks_.push_back(std::make_shared<Check>(
          Check{std::move(done), Clock::now() + options_.ready_timeout, 0}));
      wake_queries_.notify_one();
      wake_deadlines_.notify_one();
      return;
    }
  }
  done(unavailable("the collector is stopping"));
}

template <class Pick>
void StoreMonitor::answer(std::unique_lock<std::mutex>& lock, Pick pick, const Fallible& result) {
  std::vector<std::shared_ptr<Check>> picked;
  auto keep = std::stable_partition(checks_.begin(), checks_.end(),
                                    [&](const std::shared_ptr<Check>& c) { return !pick(*c); });
  picked.assign(std::make_move_iterator(keep), std::make_move_iterator(checks_.end()));
  checks_.erase(keep, checks_.end());
  lock.unlock();
  for (const auto& check : picked) check->done(result);
  lock.lock();
}

void StoreMonitor::run_queries() {
  std::unique_lock<std::mutex> lock(mutex_);
  Clock::time_point next_sample = Clock::now();
  for (;;) {
    const auto waiting = [this] {
      return std::any_of(checks_.begin(), checks_.end(),
                         [](const std::shared_ptr<Check>& c) { return c->query == 0; });
    };
    const auto ready = [&] { return stopping_ || waiting(); };
    if (size_ == nullptr) {
      wake_queries_.wait(lock, ready);
    } else {
      wake_queries_.wait_until(lock, next_sample, ready);
    }
    if (stopping_) return;
    if (waiting()) {
      const uint64_t query = ++queries_;
      for (auto& check : checks_) {
        if (check->query == 0) check->query = query;
      }
      lock.unlock();
      const Fallible result = query_store();
      lock.lock();
      answer(
          lock, [query](const Check& c) { return c.query == query; }, result);
    } else if (size_ != nullptr && Clock::now() >= next_sample) {
      lock.unlock();
      const auto size = store_.size_bytes();
      if (size) size_->set(static_cast<int64_t>(size.value()));  // else: the last value stays
      if (new_devices_ != nullptr) {
        const auto since = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count() -
                           86400;
        const auto enrolled = store_.devices_enrolled_since(since);
        if (enrolled) new_devices_->set(static_cast<int64_t>(enrolled.value()));
      }
      lock.lock();
      next_sample = Clock::now() + options_.size_period;
    }
  }
}

Fallible StoreMonitor::query_store() {
  if (writes_ == nullptr || !writes_->failing()) return store_.ping();
  if (writes_->probe_due()) {
    const Fallible probe = store_.probe_write();
    writes_->record_probe(probe);
    if (probe) return store_.ping();
  }
  // The reason (a path, the database's words) is for the operator's log.
  return unavailable("the database refuses writes; the collector's log says why");
}

void StoreMonitor::answer_late_checks() {
  std::unique_lock<std::mutex> lock(mutex_);
  const Error late = unavailable("the database did not answer within " +
                                 std::to_string(options_.ready_timeout.count()) + " ms");
  for (;;) {
    // Checked before every wait: stop() may have set it while answer() had
    // the lock released, and its notification then reached no waiter.
    if (stopping_) return;
    auto earliest = Clock::time_point::max();
    for (const auto& check : checks_) earliest = std::min(earliest, check->deadline);
    if (earliest == Clock::time_point::max()) {
      wake_deadlines_.wait(lock);
    } else {
      wake_deadlines_.wait_until(lock, earliest);
    }
    if (stopping_) return;
    const auto now = Clock::now();
    answer(
        lock, [now](const Check& c) { return c.deadline <= now; }, late);
  }
}

}  // namespace blur::collector::observe
