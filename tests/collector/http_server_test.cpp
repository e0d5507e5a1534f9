// The collector's API (api/collector_api.h) on the HTTP transport, through
// cpp-httplib's client and raw sockets (the regressions of the transport's
// replacement).
#include "server/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "api/collector_api.h"
#include "ingest/batch_decoder.h"
#include "kat.h"
#include "kat_report_batch.inc"
#include "store/sqlite_store.h"

namespace {

using namespace blur::collector;

std::vector<std::string> kat_bodies() {
  std::vector<std::string> bodies;
  blur_test::for_each_kat(kKatReportBatch, [&](const blur_test::KatBatch& v) {
    bodies.emplace_back(reinterpret_cast<const char*>(v.encoding), v.encoding_size);
  });
  return bodies;
}

// A real server on a free loopback port, with a fresh database.
class CollectorFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/blur-http-test-XXXXXX";
    dir_ = mkdtemp(pattern);
    std::string error;
    store_ = SqliteStore::open(dir_ + "/blur.db", &error);
    ASSERT_TRUE(store_) << error;
    // Vector 1 reports metric 1 at eps 1; vector 2 reports metric 7 at eps 0.5
    // and metric 4294967295 at eps 20, which stays unregistered.
    ASSERT_TRUE(
        store_->register_metric({1, Mechanism::kBinaryRandomizedResponse, 1000000}, &error));
    ASSERT_TRUE(store_->register_metric({7, Mechanism::kBinaryRandomizedResponse, 500000}, &error));
    http::Server::Options options;
    options.port = 0;
    options.threads = 4;
    server_ = std::make_unique<http::Server>(options);
    add_collector_routes(*server_, *store_);
    ASSERT_TRUE(server_->start(&error)) << error;
    port_ = server_->port();
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_->run(); });
    client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
    for (int i = 0; i < 100 && !client_->Get("/healthz"); ++i) usleep(10000);
  }
  void TearDown() override {
    server_->stop(std::chrono::seconds(5));
    if (thread_.joinable()) thread_.join();
    std::system(("rm -rf " + dir_).c_str());
  }
  httplib::Result post(const std::string& body) {
    return client_->Post("/v1/reports", body, "application/x-protobuf");
  }
  void expect_refused(const std::string& body, int status, const std::string& message) {
    const uint64_t before = store_->report_count();
    auto response = post(body);
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, status) << response->body;
    if (!message.empty()) {
      EXPECT_NE(nlohmann::json::parse(response->body)["error"].get<std::string>().find(message),
                std::string::npos)
          << response->body;
    }
    EXPECT_EQ(store_->report_count(), before);  // nothing stored
  }

  std::string dir_;
  std::unique_ptr<SqliteStore> store_;
  std::unique_ptr<http::Server> server_;
  std::thread thread_;
  int port_ = 0;
  std::unique_ptr<httplib::Client> client_;
};

TEST_F(CollectorFixture, AcknowledgesOnlyWhatItStored) {
  const std::string body = kat_bodies().at(0);
  auto response = post(body);
  ASSERT_TRUE(response);
  ASSERT_EQ(response->status, 200) << response->body;
  EXPECT_EQ(nlohmann::json::parse(response->body)["accepted"], 1);
  EXPECT_EQ(store_->report_count(), 1u);
  // The retry of an acknowledged batch changes nothing.
  response = post(body);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(nlohmann::json::parse(response->body)["duplicates"], 1);
  EXPECT_EQ(store_->report_count(), 1u);
}

TEST_F(CollectorFixture, MalformedBatchesGet400AndStoreNothing) {
  const std::string body = kat_bodies().at(0);
  expect_refused(body.substr(0, body.size() - 1), 400, "malformed protobuf");
  expect_refused(body.substr(0, 5), 400, "malformed protobuf");
  expect_refused(std::string("\x0A\x01\x00", 3) + body.substr(3), 400, "malformed protobuf");
  expect_refused("", 400, "missing required field");
  expect_refused(std::string("\xFF\xFF\xFF\xFF", 4), 400, "malformed protobuf");
}

TEST_F(CollectorFixture, OversizedBodiesAreRefused) {
  expect_refused(std::string(max_encoded_batch_size() + 1, '\x08'), 400,
                 "exceeds the largest valid batch");
  // Far past the limit: refused from the Content-Length, before the body.
  expect_refused(std::string(5 * max_encoded_batch_size(), '\x08'), 400,
                 "exceeds the largest valid batch");
}

// One report for an unregistered metric rejects the whole batch: the two
// valid reports in it are not stored either.
TEST_F(CollectorFixture, InconsistentBatchesAreRefusedAtomically) {
  expect_refused(kat_bodies().at(1), 400,
                 "report 2 (id 18446744073709551615): unknown metric 4294967295");
}

TEST_F(CollectorFixture, ServesEstimatesAndMetrics) {
  ASSERT_EQ(post(kat_bodies().at(0))->status, 200);
  auto response = client_->Get("/v1/metrics/1/estimate");
  ASSERT_TRUE(response);
  ASSERT_EQ(response->status, 200);
  const auto estimate = nlohmann::json::parse(response->body);
  EXPECT_EQ(estimate["n"], 1);
  EXPECT_EQ(estimate["mechanism"], "rr");
  ASSERT_EQ(estimate["estimates"].size(), 2u);
  EXPECT_EQ(estimate["estimates"][1]["value"], 1);
  EXPECT_LT(estimate["estimates"][1]["ci95"][0].get<double>(),
            estimate["estimates"][1]["ci95"][1].get<double>());

  response = client_->Get("/v1/metrics/999/estimate");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 404);
  response = client_->Get("/v1/metrics");
  ASSERT_TRUE(response);
  EXPECT_EQ(nlohmann::json::parse(response->body)["metrics"].size(), 2u);
}

// ?postprocess=norm-sub adds Norm-Sub estimates next to the unbiased ones;
// an unknown post-processing is a 400 that names the choices.
TEST_F(CollectorFixture, NormSubOnRequest) {
  ASSERT_EQ(post(kat_bodies().at(0))->status, 200);
  auto response = client_->Get("/v1/metrics/1/estimate?postprocess=norm-sub");
  ASSERT_TRUE(response);
  ASSERT_EQ(response->status, 200);
  const auto estimate = nlohmann::json::parse(response->body);
  EXPECT_EQ(estimate["postprocessing"], "norm-sub");
  double total = 0;
  for (const auto& e : estimate["estimates"]) {
    EXPECT_GE(e["estimate_normsub"].get<double>(), 0.0);
    total += e["estimate_normsub"].get<double>();
  }
  EXPECT_NEAR(total, 1.0, 1e-9);
  response = client_->Get("/v1/metrics/1/estimate");
  ASSERT_TRUE(response);
  EXPECT_FALSE(nlohmann::json::parse(response->body).contains("postprocessing"));
  response = client_->Get("/v1/metrics/1/estimate?postprocess=clip");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 400);
  EXPECT_NE(response->body.find("none or norm-sub"), std::string::npos);
}

}  // namespace
