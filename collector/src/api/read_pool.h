// The threads that estimates and series run on, off the HTTP I/O threads:
// a read can take seconds (a word discovery, a series over many buckets),
// and on an I/O thread it would hold every connection that thread serves,
// /healthz and device POSTs included.
//
// - At most Options::threads reads run at once, at a lower CPU priority
//   than the rest of the process (Options::niceness, Options::idle_class); at most
//   Options::max_queued wait. Past that a read is answered at once: 503, Retry-After, refusal
//   "unavailable".
// - Each read has Options::deadline from its submission (queueing
//   included). Past it, it is answered 503 with refusal "deadline" at once
//   (by a watchdog, whatever the read is doing), and the read is cancelled:
//   its Cancellation reports kDeadline and the work stops at its next
//   check, its own late answer being dropped (an answer finished past the
//   deadline is dropped too: the deadline is a cut-off).
// - stop() cancels every running read (Cancellation::Cause::kStopping),
//   answers the queued ones 503 "unavailable", and joins the threads: what
//   serve does on SIGTERM, so the process exits within its shutdown
//   timeout whatever reads were running.
#ifndef BLUR_COLLECTOR_API_READ_POOL_H
#define BLUR_COLLECTOR_API_READ_POOL_H

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "api/collector_api.h"
#include "observe/prometheus_registry.h"
#include "util/cancellation.h"

namespace blur::collector {

class ReadPool {
 public:
  struct Options {
    unsigned threads = 2;
    std::size_t max_queued = 16;
    std::chrono::milliseconds deadline{30000};
    // The read threads' niceness (Linux, per thread; 0: the process's): by
    // default the lowest, so they yield the CPU to ingestion and the I/O
    // threads, and take what those leave idle.
    int niceness = 19;
    // Linux: the read threads also run in the SCHED_IDLE class, which is
    // stronger than niceness 19 (a weight of 3 against 15, and a woken
    // ingest thread preempts a running read at once): a read takes the CPU
    // only when nothing else of the machine wants it. Where the class
    // cannot be set (a seccomp filter refusing sched_setscheduler), the
    // niceness alone applies.
    bool idle_class = true;
  };
  // The read: it should check `cancel` between units of work and, once it
  // is requested, return soon (its answer is then dropped).
  using Read = std::function<ApiResponse(const Cancellation& cancel)>;
  // Called exactly once, from a pool thread or from submit()'s caller.
  using Answer = std::function<void(ApiResponse)>;

  explicit ReadPool(Options options);
  ~ReadPool();  // stop()
  ReadPool(const ReadPool&) = delete;
  ReadPool& operator=(const ReadPool&) = delete;

  void submit(Read read, Answer answer);
  // Idempotent; later submissions are answered 503 at once.
  void stop();

  const Options& options() const { return options_; }
  // Gauges blur_collector_reads_running and blur_collector_reads_queued in
  // `registry` (which must not be rendered after this pool is destroyed).
  // Reads past their deadline are counted with the other refusals
  // (blur_collector_requests_refused_total{reason="deadline"}).
  void export_metrics(observe::Registry& registry);
  struct Stats {
    uint64_t answered = 0;                          // by the read itself, within its deadline
    uint64_t past_deadline = 0;                     // answered 503 "deadline"
    uint64_t refused = 0;                           // the queue was full, or the pool stopping
    std::size_t running = 0, queued = 0, idle = 0;  // reads; threads waiting for one
  };
  Stats stats() const;

 private:
  struct Job;
  void work();
  void watch();
  // Answers `job` unless it was answered already (true if this call did).
  static bool finish(Job& job, ApiResponse answer);

  Options options_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::condition_variable work_ready_, watch_changed_;
  std::deque<std::shared_ptr<Job>> queued_;
  std::list<std::shared_ptr<Job>> running_;
  std::size_t idle_ = 0;  // threads waiting for a read
  Stats stats_;
  std::vector<std::thread> workers_;
  std::thread watchdog_;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_API_READ_POOL_H
