// The `values` parameter of the estimate and series routes
// (api/value_selection.h) over a real SQLite store: for every frequency
// oracle in the mechanism table, the selected values' estimates are exactly
// the whole table's entries for them (with and without norm-sub, JSON and
// CSV, estimate and daily series), and nothing else is listed; numeric and
// word-discovery metrics and text that is not a value of the domain get a
// clear 400.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "api/collector_api.h"
#include "api/value_selection.h"
#include "mechanisms/mechanism_spec.h"
#include "random_reports.h"
#include "store/store.h"

namespace {

using namespace blur::collector;
using nlohmann::json;

constexpr int64_t kNow = 1795000000;

TEST(ValueSelection, ParsesValuesAndRanges) {
  const auto selection = ValueSelection::parse("9,0-3,2,3-3,4095", 4096);
  ASSERT_TRUE(selection) << selection.error().message;
  EXPECT_EQ(selection->values(), (std::vector<uint32_t>{0, 1, 2, 3, 9, 4095}));
  EXPECT_TRUE(selection->contains(2));
  EXPECT_FALSE(selection->contains(4));
  EXPECT_FALSE(selection->contains(5000));
  const auto all = ValueSelection::parse("0-4095", 4096);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->values().size(), 4096u);
}

TEST(ValueSelection, RefusesWhatIsNotAValueOfTheDomain) {
  for (const char* text : {"", "4096", "3-1", "a", "1,,2", "-1", "1-", "1-2-3", "+1", " 1",
                           "99999999999", "18446744073709551617", "0x10", "1,"}) {
    const auto selection = ValueSelection::parse(text, 4096);
    ASSERT_FALSE(selection) << "'" << text << "'";
    EXPECT_EQ(selection.error().kind, Error::Kind::kInvalid);
    EXPECT_NE(selection.error().message.find("parameter 'values'"), std::string::npos);
  }
}

class EstimateValues : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/blur-estimate-values-XXXXXX";
    dir_ = mkdtemp(pattern);
    StoreOptions options;
    options.max_report_age_seconds = int64_t{10} * 86400;  // three days keep their own day
    auto store = Store::open(dir_ + "/blur.db", Store::Mode::kReadWrite, options);
    ASSERT_TRUE(store) << store.error().message;
    store_ = std::move(store).value();
    metrics_ = blur_test::one_metric_per_mechanism();
    for (const MetricConfig& m : metrics_) ASSERT_TRUE(store_->register_metric(m));
    // 300 reports of every metric over three days, a device each.
    std::mt19937_64 rng(7);
    std::vector<Batch> batches;
    uint64_t nonce = 0;
    for (const MetricConfig& m : metrics_) {
      for (int i = 0; i < 300; ++i) {
        Batch batch;
        batch.sdk_version = 256;
        batch.device_nonce = ++nonce;
        IncomingReport r = blur_test::random_report(m, rng);
        r.report_id = 1;
        r.observed_minute = static_cast<uint32_t>((kNow - (i % 3) * 86400 - 600) / 60);
        batch.reports.push_back(r);
        batches.push_back(std::move(batch));
      }
    }
    std::vector<ReceivedBatch> received;
    for (const Batch& b : batches) received.push_back({&b, kNow});
    ASSERT_TRUE(store_->insert(received));
  }
  void TearDown() override {
    store_.reset();
    std::system(("rm -rf " + dir_).c_str());
  }
  static bool frequency_oracle(const MetricConfig& m) {
    const MechanismSpec& spec = mechanism_spec(m.mechanism);
    return !spec.numeric && !spec.discovers_words;
  }
  std::string dir_;
  std::unique_ptr<Store> store_;
  std::vector<MetricConfig> metrics_;
};

// The entries of `estimates` whose value is in `values`, in order.
json only(const json& estimates, const std::set<uint32_t>& values) {
  json kept = json::array();
  for (const json& e : estimates) {
    if (values.count(e.at("value").get<uint32_t>())) kept.push_back(e);
  }
  return kept;
}

TEST_F(EstimateValues, SelectedEstimatesAreTheTablesOwn) {
  CollectorApi api(*store_, nullptr);
  int checked = 0;
  for (const MetricConfig& m : metrics_) {
    if (!frequency_oracle(m)) continue;
    const uint32_t last = m.domain_size - 1;
    const std::set<uint32_t> values{0, last / 2, last};
    const std::string text =
        std::to_string(last) + ",0," + std::to_string(last / 2) + "-" + std::to_string(last / 2);
    const std::string id = std::to_string(m.id);
    for (const char* post : {"none", "norm-sub"}) {
      SCOPED_TRACE(std::string(blur::mechanism_name(m.mechanism)) + " postprocess=" + post);
      const ApiResponse whole = api.estimate(id, {{"postprocess", post}});
      const ApiResponse some = api.estimate(id, {{"postprocess", post}, {"values", text}});
      ASSERT_EQ(whole.status, 200) << whole.body;
      ASSERT_EQ(some.status, 200) << some.body;
      json expected = json::parse(whole.body);
      ASSERT_EQ(expected.at("estimates").size(), m.domain_size);
      expected["estimates"] = only(expected.at("estimates"), values);
      ASSERT_EQ(expected["estimates"].size(), values.size());
      EXPECT_EQ(json::parse(some.body), expected);

      const ApiResponse whole_series = api.series(id, {{"postprocess", post}});
      const ApiResponse some_series = api.series(id, {{"postprocess", post}, {"values", text}});
      ASSERT_EQ(whole_series.status, 200) << whole_series.body;
      ASSERT_EQ(some_series.status, 200) << some_series.body;
      json expected_series = json::parse(whole_series.body);
      ASSERT_EQ(expected_series.at("series").size(), 3u);
      for (json& day : expected_series["series"]) day["estimates"] = only(day["estimates"], values);
      EXPECT_EQ(json::parse(some_series.body), expected_series);
    }
    // CSV: the whole table's rows for those values, and no others.
    const ApiResponse rows = api.series(id, {{"values", text}}, Cancellation(), ResultFormat::kCsv);
    const ApiResponse all_rows = api.series(id, {}, Cancellation(), ResultFormat::kCsv);
    ASSERT_EQ(rows.status, 200) << rows.body;
    std::istringstream all_lines(all_rows.body);
    std::string line, header, expected_rows;
    std::getline(all_lines, header);
    while (std::getline(all_lines, line)) {
      // value is the 7th column (result_rows.h)
      size_t at = 0;
      for (int comma = 0; comma < 6; ++comma) at = line.find(',', at) + 1;
      const uint32_t value = static_cast<uint32_t>(std::stoul(line.substr(at)));
      if (values.count(value)) expected_rows += line + "\n";
    }
    EXPECT_EQ(rows.body, header + "\n" + expected_rows);
    ++checked;
  }
  EXPECT_GE(checked, 5);  // grr, olh, rappor, hadamard, ... of the table
}

TEST_F(EstimateValues, RefusedWhereThereIsNoTableOfValues) {
  CollectorApi api(*store_, nullptr);
  int refused = 0;
  for (const MetricConfig& m : metrics_) {
    const std::string id = std::to_string(m.id);
    if (frequency_oracle(m)) {
      const ApiResponse outside = api.estimate(id, {{"values", std::to_string(m.domain_size)}});
      EXPECT_EQ(outside.status, 400) << outside.body;
      EXPECT_NE(outside.body.find("parameter 'values'"), std::string::npos) << outside.body;
      continue;
    }
    for (const ApiResponse& answer :
         {api.estimate(id, {{"values", "0"}}), api.series(id, {{"values", "0"}})}) {
      EXPECT_EQ(answer.status, 400) << blur::mechanism_name(m.mechanism) << ": " << answer.body;
      EXPECT_NE(answer.body.find("frequency-oracle metrics only"), std::string::npos)
          << answer.body;
    }
    ++refused;
  }
  EXPECT_GE(refused, 2);  // laplace, pem, ...
}

}  // namespace
