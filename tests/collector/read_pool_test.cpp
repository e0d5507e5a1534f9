// The read pool (api/read_pool.h): reads answered by themselves, at their
// deadline while still running (and then cancelled), refused past the
// queue, and cancelled by stop(); every read answered exactly once.
#include "api/read_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cerrno>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#ifdef __linux__
#include <sched.h>
#include <sys/resource.h>
#endif

namespace {

using blur::collector::ApiResponse;
using blur::collector::Cancellation;
using blur::collector::ReadPool;
using namespace std::chrono_literals;

// Answers as they arrive (declared before the pool, which may answer
// until it is destroyed), and a way to wait for them (generous deadline:
// the checks are on what arrives, never on how fast).
class Answers {
 public:
  ReadPool::Answer collect(int id) {
    return [this, id](ApiResponse answer) {
      std::lock_guard<std::mutex> lock(mutex_);
      answers_.push_back({id, std::move(answer)});
      changed_.notify_all();
    };
  }
  bool wait_for(size_t count) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, 60s, [&] { return answers_.size() >= count; });
  }
  std::vector<std::pair<int, ApiResponse>> taken() {
    std::lock_guard<std::mutex> lock(mutex_);
    return answers_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::pair<int, ApiResponse>> answers_;
};

// A read that works until it is cancelled, then reports why.
struct StuckRead {
  std::atomic<bool> started{false};
  std::atomic<int> cause{-1};
  std::atomic<bool> returned{false};
  ReadPool::Read read() {
    return [this](const Cancellation& cancel) {
      started = true;
      while (!cancel.requested()) std::this_thread::sleep_for(1ms);
      cause = static_cast<int>(cancel.cause());
      returned = true;
      return ApiResponse(200, "{\"late\":true}");  // dropped: past the deadline
    };
  }
};

void wait_until(const std::atomic<bool>& flag) {
  for (int i = 0; i < 60000 && !flag; ++i) std::this_thread::sleep_for(1ms);
  ASSERT_TRUE(flag);
}

TEST(ReadPool, AnswersWithTheReadsOwnAnswer) {
  Answers answers;
  ReadPool pool({2, 4, 10s, 0});
  pool.submit([](const Cancellation&) { return ApiResponse(200, "{\"ok\":1}"); },
              answers.collect(1));
  ASSERT_TRUE(answers.wait_for(1));
  const auto got = answers.taken();
  EXPECT_EQ(got[0].second.status, 200);
  EXPECT_EQ(got[0].second.body, "{\"ok\":1}");
}

// The deadline answers (the watchdog, or the read's thread once the read
// returns, whichever is first): 503 "deadline", never the read's late
// answer; the read sees kDeadline and stops. (On a machine so loaded that
// the thread starts the read only past its deadline, it never runs: the
// same answer.) The pools here run at the process's priority.
TEST(ReadPool, AnswersDeadlineThenCancelsTheRead) {
  Answers answers;
  StuckRead stuck;
  ReadPool pool({1, 4, 1s, 0});
  pool.submit(stuck.read(), answers.collect(1));
  ASSERT_TRUE(answers.wait_for(1));
  const auto got = answers.taken();
  EXPECT_EQ(got[0].second.status, 503);
  ASSERT_TRUE(got[0].second.refusal.has_value());
  EXPECT_EQ(*got[0].second.refusal, blur::collector::observe::Reason::kDeadline);
  EXPECT_NE(got[0].second.body.find("deadline"), std::string::npos) << got[0].second.body;
  if (stuck.started) {
    wait_until(stuck.returned);
    EXPECT_EQ(stuck.cause, static_cast<int>(Cancellation::Cause::kDeadline));
  }
  // The late answer never arrives, and the pool counted the refusal (the
  // watchdog counts it just after answering: wait for the count).
  for (int i = 0; i < 3000 && (pool.stats().running != 0 || pool.stats().past_deadline == 0);
       ++i) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(answers.taken().size(), 1u);
  EXPECT_EQ(pool.stats().past_deadline, 1u);
  EXPECT_EQ(pool.stats().running, 0u);
}

// A read waiting in the queue past its deadline is answered there and
// never runs.
TEST(ReadPool, QueuedReadPastItsDeadlineNeverRuns) {
  Answers answers;
  StuckRead stuck;
  std::atomic<bool> second_ran{false};
  ReadPool pool({1, 4, 300ms, 0});
  pool.submit(stuck.read(), answers.collect(1));
  pool.submit(
      [&](const Cancellation&) {
        second_ran = true;
        return ApiResponse(200, "{}");
      },
      answers.collect(2));
  ASSERT_TRUE(answers.wait_for(2));
  for (const auto& [id, answer] : answers.taken()) {
    EXPECT_EQ(answer.status, 503) << id;
    EXPECT_EQ(answer.refusal, blur::collector::observe::Reason::kDeadline) << id;
  }
  if (stuck.started) wait_until(stuck.returned);
  for (int i = 0; i < 50; ++i) std::this_thread::sleep_for(2ms);
  EXPECT_FALSE(second_ran);
}

// Past the queue: 503 "unavailable" at once, without running.
TEST(ReadPool, RefusesPastTheQueue) {
  Answers answers;
  StuckRead stuck;
  ReadPool pool({1, 1, 60s, 0});
  pool.submit(stuck.read(), answers.collect(1));
  wait_until(stuck.started);
  pool.submit([](const Cancellation&) { return ApiResponse(200, "{}"); }, answers.collect(2));
  pool.submit([](const Cancellation&) { return ApiResponse(200, "{}"); }, answers.collect(3));
  ASSERT_TRUE(answers.wait_for(1));
  const auto got = answers.taken();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, 3);
  EXPECT_EQ(got[0].second.status, 503);
  EXPECT_EQ(got[0].second.refusal, blur::collector::observe::Reason::kUnavailable);
  EXPECT_EQ(pool.stats().refused, 1u);
  pool.stop();
}

// stop(): the running read is cancelled (kStopping) and answered 503, the
// queued one answered 503 without running, later ones refused at once.
TEST(ReadPool, StopCancelsRunningAndQueuedReads) {
  Answers answers;
  StuckRead stuck;
  ReadPool pool({1, 4, 600s, 0});
  pool.submit(stuck.read(), answers.collect(1));
  wait_until(stuck.started);
  pool.submit([](const Cancellation&) { return ApiResponse(200, "{}"); }, answers.collect(2));
  pool.stop();  // returns once the running read has returned
  EXPECT_TRUE(stuck.returned);
  EXPECT_EQ(stuck.cause, static_cast<int>(Cancellation::Cause::kStopping));
  pool.submit([](const Cancellation&) { return ApiResponse(200, "{}"); }, answers.collect(3));
  ASSERT_TRUE(answers.wait_for(3));
  const auto got = answers.taken();
  ASSERT_EQ(got.size(), 3u);
  for (const auto& [id, answer] : got) {
    EXPECT_EQ(answer.status, 503) << id;
    EXPECT_EQ(answer.refusal, blur::collector::observe::Reason::kUnavailable) << id;
  }
}

// --read-queue 0: a read is taken when a thread is idle, refused otherwise.
TEST(ReadPool, NoQueueStillRunsOnAnIdleThread) {
  Answers answers;
  StuckRead stuck;
  ReadPool pool({1, 0, 60s, 0});
  for (int i = 0; i < 60000 && pool.stats().idle == 0; ++i) {
    std::this_thread::sleep_for(1ms);  // until the thread waits for a read
  }
  pool.submit(stuck.read(), answers.collect(1));
  wait_until(stuck.started);
  pool.submit([](const Cancellation&) { return ApiResponse(200, "{}"); }, answers.collect(2));
  ASSERT_TRUE(answers.wait_for(1));
  EXPECT_EQ(answers.taken()[0].first, 2);
  EXPECT_EQ(answers.taken()[0].second.status, 503);
  pool.stop();
}

#ifdef __linux__
// Reads take the CPU only when the rest of the machine leaves it idle: the
// read threads are in the SCHED_IDLE class and at niceness 19, and a pool
// told not to use the idle class leaves its threads in the normal one.
TEST(ReadPool, ReadsRunInTheIdleSchedulingClass) {
  for (const bool idle_class : {true, false}) {
    Answers answers;
    ReadPool::Options options;
    options.idle_class = idle_class;
    ReadPool pool(options);
    pool.submit(
        [](const Cancellation&) {
          const int policy = sched_getscheduler(0);
          errno = 0;
          const int niceness = getpriority(PRIO_PROCESS, 0);  // this thread's, on Linux
          return ApiResponse(200, std::to_string(policy) + " " + std::to_string(niceness));
        },
        answers.collect(1));
    ASSERT_TRUE(answers.wait_for(1));
    const std::string expected =
        std::to_string(idle_class ? SCHED_IDLE : SCHED_OTHER) + " 19";
    EXPECT_EQ(answers.taken()[0].second.body, expected) << "idle_class " << idle_class;
  }
  // The thread that made the pools is untouched.
  EXPECT_EQ(sched_getscheduler(0), SCHED_OTHER);
}
#endif

}  // namespace
