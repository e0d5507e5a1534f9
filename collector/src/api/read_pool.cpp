#include "api/read_pool.h"

#include <algorithm>
#include <exception>
#include <utility>

#ifdef __linux__
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "util/json_writer.h"

namespace blur::collector {

struct ReadPool::Job {
  Read read;
  Answer answer;
  Cancellation::Clock::time_point deadline;
  std::atomic<bool> answered{false};
};

namespace {

// The calling thread (and the threads it starts: discovery's) yields the CPU
// to the rest of the process: ingestion and the I/O threads keep their rate
// while reads run, and reads take the idle cores. Linux sets niceness and
// the scheduling class per thread; elsewhere reads run at the process's
// priority.
void lower_priority(int niceness, bool idle_class) {
#ifdef __linux__
  const auto thread = static_cast<pid_t>(syscall(SYS_gettid));
  (void)setpriority(PRIO_PROCESS, static_cast<id_t>(thread), niceness);
  if (idle_class) {
    const sched_param none{};
    (void)sched_setscheduler(thread, SCHED_IDLE, &none);
  }
#else
  (void)niceness;
  (void)idle_class;
#endif
}

}  // namespace

ReadPool::ReadPool(Options options) : options_(options) {
  options_.threads = std::max(1u, options_.threads);
  for (unsigned t = 0; t < options_.threads; ++t) workers_.emplace_back([this] { work(); });
  watchdog_ = std::thread([this] { watch(); });
}

ReadPool::~ReadPool() { stop(); }

bool ReadPool::finish(Job& job, ApiResponse answer) {
  if (job.answered.exchange(true)) return false;
  job.answer(std::move(answer));
  return true;
}

void ReadPool::submit(Read read, Answer answer) {
  auto job = std::make_shared<Job>();
  job->read = std::move(read);
  job->answer = std::move(answer);
  job->deadline = Cancellation::Clock::now() + options_.deadline;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    // An idle thread takes a read at once: it does not count as waiting.
    if (!stopping_ && queued_.size() < options_.max_queued + idle_) {
      queued_.push_back(std::move(job));
      work_ready_.notify_one();
      watch_changed_.notify_one();
      return;
    }
    ++stats_.refused;
  }
  ApiResponse refusal =
      stopping_ ? cancelled_response(Cancellation::Cause::kStopping)
                : error_response(
                      unavailable(std::to_string(options_.threads) + " reads are running and " +
                                  std::to_string(options_.max_queued) +
                                  " waiting (--read-threads, --read-queue); retry later"));
  finish(*job, std::move(refusal));
}

void ReadPool::work() {
  lower_priority(options_.niceness, options_.idle_class);
  for (;;) {
    std::shared_ptr<Job> job;
    std::list<std::shared_ptr<Job>>::iterator slot;
    bool late = false;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ++idle_;
      work_ready_.wait(lock, [this] { return stopping_ || !queued_.empty(); });
      --idle_;
      if (stopping_) return;  // stop() answers what is queued
      job = std::move(queued_.front());
      queued_.pop_front();
      if (job->answered) continue;  // the watchdog answered it: its deadline passed
      late = Cancellation::Clock::now() >= job->deadline;
      if (!late) slot = running_.insert(running_.end(), job);
    }
    if (late) {  // it passed its deadline waiting, before the watchdog saw it: never run
      if (finish(*job, cancelled_response(Cancellation::Cause::kDeadline))) {
        std::lock_guard<std::mutex> lock(mutex_);
        ++stats_.past_deadline;
      }
      continue;
    }
    const Cancellation cancel(job->deadline, &stopping_);
    ApiResponse answer;
    try {
      answer = job->read(cancel);
    } catch (const std::exception& e) {  // out of memory, mostly: this read fails, not the pool
      answer =
          ApiResponse(500, json_text({{"error", std::string("the read failed: ") + e.what()}}));
      answer.refusal = observe::Reason::kInternal;
    } catch (...) {
      answer = ApiResponse(500, json_text({{"error", "the read failed"}}));
      answer.refusal = observe::Reason::kInternal;
    }
    // Past the deadline (or stopping), whatever the read made of it: the
    // same answer as the watchdog's, whichever of the two comes first.
    const Cancellation::Cause cause = cancel.cause();
    if (cause != Cancellation::Cause::kNone) answer = cancelled_response(cause);
    const bool answered = finish(*job, std::move(answer));
    std::lock_guard<std::mutex> lock(mutex_);
    if (answered)
      ++(cause == Cancellation::Cause::kDeadline ? stats_.past_deadline : stats_.answered);
    running_.erase(slot);
  }
}

// Answers every read past its deadline, queued or running, when it passes.
void ReadPool::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    auto next = Cancellation::Clock::time_point::max();
    std::vector<std::shared_ptr<Job>> late;
    const auto now = Cancellation::Clock::now();
    auto visit = [&](const std::shared_ptr<Job>& job) {
      if (job->answered) return false;
      if (job->deadline <= now) {
        late.push_back(job);
        return true;
      }
      next = std::min(next, job->deadline);
      return false;
    };
    for (const auto& job : running_) visit(job);
    queued_.erase(std::remove_if(queued_.begin(), queued_.end(), visit), queued_.end());
    if (!late.empty()) {
      lock.unlock();
      uint64_t passed = 0;
      for (const auto& job : late) {
        passed += finish(*job, cancelled_response(Cancellation::Cause::kDeadline)) ? 1 : 0;
      }
      lock.lock();
      stats_.past_deadline += passed;
      continue;  // look again: time went by
    }
    if (next == Cancellation::Clock::time_point::max()) {
      watch_changed_.wait(lock);
    } else {
      watch_changed_.wait_until(lock, next);
    }
  }
}

void ReadPool::stop() {
  std::deque<std::shared_ptr<Job>> queued;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    queued.swap(queued_);
    stats_.refused += queued.size();
  }
  work_ready_.notify_all();
  watch_changed_.notify_all();
  for (const auto& job : queued) finish(*job, cancelled_response(Cancellation::Cause::kStopping));
  for (std::thread& worker : workers_) {
    if (worker.joinable()) worker.join();
  }
  if (watchdog_.joinable()) watchdog_.join();
}

void ReadPool::export_metrics(observe::Registry& registry) {
  registry.gauge_function("blur_collector_reads_running",
                          "Estimates and series running on the read threads", {},
                          [this] { return static_cast<double>(stats().running); });
  registry.gauge_function("blur_collector_reads_queued",
                          "Estimates and series waiting for a read thread", {},
                          [this] { return static_cast<double>(stats().queued); });
}

ReadPool::Stats ReadPool::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Stats stats = stats_;
  stats.running = running_.size();
  stats.queued = queued_.size();
  stats.idle = idle_;
  return stats;
}

}  // namespace blur::collector
