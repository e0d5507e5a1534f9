// libFuzzer: the read API's request targets, from the query string's
// percent-decoding (server/http_text.h) to CollectorApi::estimate and
// ::series reading `from`, `to`, `postprocess` and `bucket`, against a
// SQLite store (a temporary file) holding reports of three metrics over
// three days. The input is the target after "/v1/metrics/", e.g.
// "1/series?bucket=hour&from=2026-11-18". Properties: no exception; the
// answer is 200, or 400/404 with a JSON body {"error": "..."}, never 5xx;
// 404 exactly when the id names no metric; a 200 answer only for known
// parameters with valid values, echoing the range it read, and counting
// exactly the stored reports whose bucket starts in [from, to).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <string_view>

#include "api/collector_api.h"
#include "random_reports.h"
#include "server/http_text.h"
#include "util/time_text.h"

namespace {

using namespace blur::collector;

constexpr int64_t kFirstReport = 1795000000;  // 2026-11-18T11:06:40Z
constexpr int64_t kReportSpacing = 9973;      // 26 reports a metric over three days
constexpr int kReportsPerMetric = 26;

std::vector<MetricConfig> fuzz_metrics() {
  MetricConfig rr;  // one-minute buckets: hourly and daily series
  rr.id = 1;
  rr.epsilon_micros = 1000000;
  rr.bucket_seconds = 60;
  MetricConfig grr;  // daily buckets: ?bucket=hour is refused
  grr.id = 2;
  grr.mechanism = MechanismId::kGeneralizedRandomizedResponse;
  grr.epsilon_micros = 2000000;
  grr.domain_size = 4;
  grr.bucket_seconds = 86400;
  MetricConfig laplace;  // numeric
  laplace.id = 3;
  laplace.mechanism = MechanismId::kDiscreteLaplace;
  laplace.epsilon_micros = 500000;
  laplace.domain_size = 11;
  laplace.range_high = 10;
  return {rr, grr, laplace};
}

struct Fixture {
  std::filesystem::path dir;
  std::unique_ptr<Store> store;
  std::unique_ptr<CollectorApi> api;
};

void remove_fixture_dir();

Fixture& fixture() {
  static Fixture* f = [] {
    auto* made = new Fixture;
    char pattern[] = "/tmp/blur-query-fuzz-XXXXXX";
    if (mkdtemp(pattern) == nullptr) __builtin_trap();
    made->dir = pattern;
    std::atexit(remove_fixture_dir);
    auto store = Store::open("sqlite:" + (made->dir / "fuzz.db").string(), Store::Mode::kReadWrite);
    if (!store) __builtin_trap();
    made->store = std::move(store.value());
    std::mt19937_64 rng(1);
    for (const MetricConfig& m : fuzz_metrics()) {
      if (!made->store->register_metric(m)) __builtin_trap();
    }
    for (int k = 0; k < kReportsPerMetric; ++k) {
      Batch batch;
      batch.device_nonce = static_cast<uint64_t>(k) + 1;
      for (const MetricConfig& m : fuzz_metrics()) {
        batch.reports.push_back(blur_test::random_report(m, rng));
        batch.reports.back().report_id = m.id;
      }
      const int64_t received = kFirstReport + k * kReportSpacing;
      if (!made->store->insert({{&batch, received}})) __builtin_trap();
    }
    made->api = std::make_unique<CollectorApi>(*made->store, nullptr);
    return made;
  }();
  return *f;
}

void remove_fixture_dir() {
  std::error_code ignored;
  std::filesystem::remove_all(fixture().dir, ignored);
}

// The stored reports of a metric whose bucket starts in [from, to).
uint64_t expected_reports(const MetricConfig& metric, int64_t from, int64_t to) {
  uint64_t count = 0;
  for (int k = 0; k < kReportsPerMetric; ++k) {
    const int64_t t = kFirstReport + k * kReportSpacing;
    const int64_t start = t - t % metric.bucket_seconds;
    if (start >= from && start < to) ++count;
  }
  return count;
}

const std::string* first(const QueryParams& query, std::string_view name) {
  for (const auto& [key, value] : query) {
    if (key == name) return &value;
  }
  return nullptr;
}

// The metric the id text names, read independently of the API: 1 to 10
// decimal digits whose value is a registered id.
std::optional<MetricConfig> named_metric(const std::string& id) {
  if (id.empty() || id.size() > 10 || id.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const unsigned long long value = std::strtoull(id.c_str(), nullptr, 10);
  for (const MetricConfig& m : fuzz_metrics()) {
    if (m.id == value) return m;
  }
  return std::nullopt;
}

// A 200 answer: only known parameters, each valid; the range read echoed;
// the reports counted those in the range.
void check_success(const MetricConfig& metric, bool series, const QueryParams& query,
                   const nlohmann::json& body) {
  for (const auto& [key, value] : query) {
    if (key != "from" && key != "to" && key != "postprocess" && (key != "bucket" || !series))
      __builtin_trap();
  }
  if (const std::string* post = first(query, "postprocess")) {
    if (*post != "none" && *post != "norm-sub") __builtin_trap();
  }
  int64_t range[2] = {INT64_MIN, INT64_MAX};
  const char* names[2] = {"from", "to"};
  for (int i = 0; i < 2; ++i) {
    const std::string* text = first(query, names[i]);
    if (!text) {
      if (body.contains(names[i])) __builtin_trap();
      continue;
    }
    const auto t = parse_time(*text);
    if (!t || !body.contains(names[i]) || body[names[i]] != format_time(*t)) __builtin_trap();
    range[i] = *t;
  }
  if (range[0] >= range[1]) __builtin_trap();
  const uint64_t expected = expected_reports(metric, range[0], range[1]);
  if (!series) {
    if (body.value("n", uint64_t{0}) != expected) __builtin_trap();
    return;
  }
  const std::string* bucket = first(query, "bucket");
  const int64_t width = bucket && *bucket == "hour" ? 3600 : 86400;
  if (bucket && *bucket != "hour" && *bucket != "day") __builtin_trap();
  if (width < metric.bucket_seconds) __builtin_trap();
  uint64_t total = 0;
  int64_t previous = INT64_MIN;
  for (const auto& period : body.at("series")) {
    const int64_t start = period.at("start_unix").get<int64_t>();
    if (start <= previous || start % width != 0) __builtin_trap();
    if (period.at("start") != format_time(start)) __builtin_trap();
    previous = start;
    total += period.at("n").get<uint64_t>();
  }
  if (total != expected) __builtin_trap();
}

void check(std::string_view input) {
  http::Target target;
  std::string error;
  if (!http::parse_target("/v1/metrics/" + std::string(input), &target, &error)) return;
  // The routes: /v1/metrics/{id}/estimate and /v1/metrics/{id}/series.
  const std::string_view rest = std::string_view(target.path).substr(12);
  const size_t slash = rest.find('/');
  if (slash == 0 || slash == std::string_view::npos) return;
  const std::string id(rest.substr(0, slash));
  const std::string_view endpoint = rest.substr(slash + 1);
  if (endpoint != "estimate" && endpoint != "series") return;
  const bool series = endpoint == "series";

  const CollectorApi& api = *fixture().api;
  const ApiResponse answer = series ? api.series(id, target.query) : api.estimate(id, target.query);
  const nlohmann::json body = nlohmann::json::parse(answer.body, nullptr, false);
  if (body.is_discarded() || !body.is_object()) __builtin_trap();
  const auto metric = named_metric(id);
  if ((answer.status == 404) != !metric) __builtin_trap();
  if (answer.status == 200) return check_success(*metric, series, target.query, body);
  if (answer.status != 400 && answer.status != 404) __builtin_trap();
  if (body.size() != 1 || !body.contains("error") || !body["error"].is_string() ||
      body["error"].get<std::string>().empty()) {
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    check(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (...) {
    __builtin_trap();  // the API answers; it never throws
  }
  return 0;
}
