// The group committer on SQLite, where commits are pipelined: each group is
// committed lazily and answered only after a sync of the write-ahead log
// (store::CommitSync), while the writer commits the next group. Every batch
// is answered exactly once, what is answered as stored is stored, and stop()
// answers everything it took.
#include "ingest/group_commit.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "incoming_reports.h"
#include "store/store.h"

namespace {

using namespace blur::collector;

constexpr int64_t kNow = 1795000000;

std::shared_ptr<const Batch> one_report_batch(uint64_t nonce) {
  auto batch = std::make_shared<Batch>();
  batch->sdk_version = 256;
  batch->device_nonce = nonce;
  IncomingReport report = blur_test::binary_report(1, nonce % 2 == 0);
  report.observed_minute = kNow / 60;
  batch->reports.push_back(report);
  return batch;
}

class GroupCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/blur-group-commit-XXXXXX";
    dir_ = mkdtemp(pattern);
    auto store = Store::open(dir_ + "/blur.db", Store::Mode::kReadWrite);
    ASSERT_TRUE(store) << store.error().message;
    store_ = std::move(store).value();
    ASSERT_TRUE(store_->register_metric({1, MechanismId::kBinaryRandomizedResponse, 1000000}));
  }
  void TearDown() override {
    store_.reset();
    std::system(("rm -rf " + dir_).c_str());
  }
  std::string dir_;
  std::unique_ptr<Store> store_;
};

// Closed-loop senders (each waits for its answer, as devices do): every
// batch answered once, all stored, and in fewer commits than batches.
TEST_F(GroupCommitTest, PipelinedCommitsAnswerEveryBatchOnceStored) {
  ASSERT_NE(store_->commit_sync(), nullptr) << "SQLite syncs its log after a lazy commit";
  GroupCommitter committer(*store_);
  constexpr int kSenders = 16, kPerSender = 60;
  std::atomic<int> answered{0}, stored{0};
  std::vector<std::thread> senders;
  for (int s = 0; s < kSenders; ++s) {
    senders.emplace_back([&, s] {
      for (int k = 0; k < kPerSender; ++k) {
        std::mutex m;
        std::condition_variable cv;
        bool done = false;
        committer.submit(one_report_batch(static_cast<uint64_t>(s) * 1000 + k + 1), kNow,
                         [&](const Outcome<BatchOutcome>& outcome) {
                           ++answered;
                           if (outcome && outcome->inserted == 1) ++stored;
                           std::lock_guard<std::mutex> lock(m);
                           done = true;
                           cv.notify_one();
                         });
        std::unique_lock<std::mutex> lock(m);
        cv.wait(lock, [&] { return done; });
      }
    });
  }
  for (std::thread& t : senders) t.join();
  committer.stop();
  EXPECT_EQ(answered.load(), kSenders * kPerSender);
  EXPECT_EQ(stored.load(), kSenders * kPerSender);
  EXPECT_EQ(store_->report_count().value(), static_cast<uint64_t>(kSenders * kPerSender));
  const GroupCommitter::Stats stats = committer.stats();
  EXPECT_EQ(stats.batches, static_cast<uint64_t>(kSenders * kPerSender));
  EXPECT_LT(stats.commits, stats.batches);  // groups, not one commit per batch
  EXPECT_EQ(stats.devices_in_flight, 0u);
}

// stop() right after a burst: each batch is answered exactly once, either
// stored or refused as the collector stops; what was answered stored is.
TEST_F(GroupCommitTest, StopAnswersEverythingItTook) {
  constexpr int kBatches = 2000;
  std::vector<std::atomic<int>> answers(kBatches);
  std::atomic<int> stored{0};
  {
    GroupCommitter committer(*store_);
    for (int i = 0; i < kBatches; ++i) {
      committer.submit(one_report_batch(static_cast<uint64_t>(i) + 1), kNow,
                       [&, i](const Outcome<BatchOutcome>& outcome) {
                         ++answers[i];
                         if (outcome && outcome->inserted == 1) ++stored;
                       });
    }
    committer.stop();
  }
  for (int i = 0; i < kBatches; ++i) EXPECT_EQ(answers[i].load(), 1) << "batch " << i;
  EXPECT_GT(stored.load(), 0);
  EXPECT_EQ(store_->report_count().value(), static_cast<uint64_t>(stored.load()));
}

}  // namespace
