// Estimates and series as reads that can be cut short (api/collector_api.h
// over a real SQLite store): a cancelled read answers 503 "deadline" or
// "stopping", a word-discovery series past its period cap is a clear 400,
// and discovery results are reused only while the reports are unchanged.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "api/collector_api.h"
#include "random_reports.h"
#include "store/store.h"

namespace {

using namespace blur::collector;

constexpr int64_t kNow = 1795000000;

MetricConfig pem_metric() {
  MetricConfig metric{11, blur::MechanismId::kPrefixExtension, 4000000, 16};
  metric.retention_days = 60;  // reports of 745 hours ago keep their own hour
  return metric;
}

class EstimateReads : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/blur-estimate-reads-XXXXXX";
    dir_ = mkdtemp(pattern);
    // Reports observed up to 40 days back keep their hour (the default age
    // window, 3 days, would bucket them at arrival).
    StoreOptions options;
    options.max_report_age_seconds = int64_t{40} * 86400;
    auto store = Store::open(dir_ + "/blur.db", Store::Mode::kReadWrite, options);
    ASSERT_TRUE(store) << store.error().message;
    store_ = std::move(store).value();
    ASSERT_TRUE(store_->register_metric(pem_metric()));
    ASSERT_TRUE(
        store_->register_metric({1, blur::MechanismId::kBinaryRandomizedResponse, 1000000}));
  }
  void TearDown() override {
    store_.reset();
    std::system(("rm -rf " + dir_).c_str());
  }
  // One random pem report per hour for `hours` hours before kNow, each from
  // its own device, and `extra` more in the last hour.
  void post(int hours, int extra = 0, uint64_t first_nonce = 1) {
    std::mt19937_64 rng(first_nonce);
    std::vector<Batch> batches;
    for (int h = 0; h < hours + extra; ++h) {
      Batch batch;
      batch.sdk_version = 256;
      batch.device_nonce = first_nonce + static_cast<uint64_t>(h);
      IncomingReport r = blur_test::random_report(pem_metric(), rng);
      r.report_id = 1;
      r.observed_minute = static_cast<uint32_t>((kNow - ((h < hours ? h : 0) * 3600 + 1800)) / 60);
      batch.reports.push_back(r);
      batches.push_back(std::move(batch));
    }
    std::vector<ReceivedBatch> received;
    for (const Batch& b : batches) received.push_back({&b, kNow});
    ASSERT_TRUE(store_->insert(received));
  }
  std::string dir_;
  std::unique_ptr<Store> store_;
};

// A read whose deadline passed answers 503 "deadline"; one cancelled by
// the collector stopping, 503 "unavailable"; never a partial 200.
TEST_F(EstimateReads, CancelledReadsAnswer503) {
  post(48);
  const CollectorApi api(*store_, nullptr);
  const Cancellation late(Cancellation::Clock::now(), nullptr);
  for (const ApiResponse& answer :
       {api.estimate("11", {}, late), api.series("11", {{"bucket", "hour"}}, late),
        api.estimate("1", {}, late)}) {
    EXPECT_EQ(answer.status, 503) << answer.body;
    EXPECT_EQ(answer.refusal, observe::Reason::kDeadline);
    EXPECT_NE(answer.body.find("deadline"), std::string::npos) << answer.body;
  }
  const std::atomic<bool> stopping{true};
  const Cancellation stopped(Cancellation::Clock::time_point::max(), &stopping);
  const ApiResponse answer = api.series("11", {{"bucket", "day"}}, stopped);
  EXPECT_EQ(answer.status, 503) << answer.body;
  EXPECT_EQ(answer.refusal, observe::Reason::kUnavailable);
  EXPECT_EQ(api.estimate("11", {}).status, 200);  // the same read, not cancelled
}

// 745 hours with reports: the hourly series is refused, naming the cap and
// what to do; the daily one (32 days) and a narrowed hourly one answer.
TEST_F(EstimateReads, DiscoverySeriesIsCappedInPeriods) {
  post(static_cast<int>(kMaxDiscoverySeriesPeriods) + 1);
  const CollectorApi api(*store_, nullptr);
  const ApiResponse hourly = api.series("11", {{"bucket", "hour"}});
  EXPECT_EQ(hourly.status, 400) << hourly.body;
  const std::string error = nlohmann::json::parse(hourly.body)["error"];
  EXPECT_NE(error.find("at most 744 periods"), std::string::npos) << error;
  EXPECT_NE(error.find("this one has 745"), std::string::npos) << error;
  EXPECT_NE(error.find("bucket=day"), std::string::npos) << error;
  const ApiResponse daily = api.series("11", {{"bucket", "day"}});
  ASSERT_EQ(daily.status, 200) << daily.body;
  EXPECT_GE(nlohmann::json::parse(daily.body)["series"].size(), 31u);
  const ApiResponse narrowed =
      api.series("11", {{"bucket", "hour"}, {"from", std::to_string(kNow - 24 * 3600)}});
  EXPECT_EQ(narrowed.status, 200) << narrowed.body;
}

// The same estimate twice: the second from the cache. One more report in
// the range: discovered again. The answers equal the uncached ones.
TEST_F(EstimateReads, DiscoveryCacheFollowsTheReports) {
  post(24, 100);
  const CollectorApi api(*store_, nullptr);
  const ApiResponse first = api.estimate("11", {});
  ASSERT_EQ(first.status, 200) << first.body;
  const uint64_t misses = api.discovery_cache().misses();
  EXPECT_EQ(api.estimate("11", {}).body, first.body);
  EXPECT_EQ(api.discovery_cache().misses(), misses);
  EXPECT_EQ(api.discovery_cache().hits(), 1u);
  post(1, 0, 100000);
  const ApiResponse after = api.estimate("11", {});
  EXPECT_EQ(api.discovery_cache().misses(), misses + 1);
  EXPECT_EQ(after.body, CollectorApi(*store_, nullptr).estimate("11", {}).body);
  EXPECT_NE(nlohmann::json::parse(after.body)["n"], nlohmann::json::parse(first.body)["n"]);
}

}  // namespace
