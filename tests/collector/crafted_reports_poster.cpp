// A poisoning attacker for the contribution-bound tests: device nonces that
// each post `reports` crafted binary-rr reports of value 1 (no randomization:
// the largest push an rr report can give), encoded with the SDK's own
// encoder, 64 per batch, all observed in one minute (one time bucket), or
// backdated over many buckets.
//
//   crafted_reports_poster URL METRIC EPSILON_MICROS FIRST_NONCE NONCES REPORTS MINUTE THREADS
//                          [impersonate]
//
// MINUTE is the observed minute of every report, or MINUTE/PER/STEP: a
// nonce's report j (from 0) is observed at MINUTE - (j / PER) x STEP, so
// PER reports in each of REPORTS / PER buckets STEP minutes apart, the
// newest first (4/60: 4 reports per past hour, as issue 26's backdating).
//
// Each nonce is enrolled first (POST /v1/enroll with $BLUR_ENROLLMENT_SECRET
// and a device key of the poster's making, as a fake device with the app's
// secret can) and posts with its own device token; `impersonate` posts
// every nonce's batches with the first nonce's token instead (the collector
// must refuse them: 403). With $BLUR_DEVICE_TOKEN the nonces are not
// enrolled: every batch carries that token (a device's own, for FIRST_NONCE
// and NONCES 1). Report ids start at $BLUR_FIRST_REPORT_ID (default 1).
// Without either variable (a collector run with --no-auth) nothing is
// enrolled and batches go without credentials.
//
// Prints one JSON line: what the collector answered in total (accepted,
// duplicates, over_limit, the first limit message, failed batches).
#include <httplib.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "blur/report/report_encoding.h"
#include "device_reports.h"
#include "fake_enrollment.h"

namespace {

struct Totals {
  std::mutex mutex;
  uint64_t batches = 0, accepted = 0, duplicates = 0, over_limit = 0, failed = 0;
  std::string limit;
  std::string first_error;
};

// The one place a batch goes to the collector.
httplib::Result post_batch(httplib::Client& client, const std::string& body,
                           const std::string& token) {
  httplib::Headers headers;
  if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
  return client.Post("/v1/reports", headers, body, "application/x-protobuf");
}

// A device token for `nonce` (tests/collector/fake_enrollment.h).
std::string enroll(httplib::Client& client, uint64_t nonce) {
  if (const char* given = std::getenv("BLUR_DEVICE_TOKEN")) return given;
  return blur_test::enroll_fake_device(client, nonce, "crafted");
}

// When a nonce's report j (from 0) was observed.
struct Minutes {
  uint32_t first = 0;
  uint64_t per = 1;   // reports per step
  uint64_t step = 0;  // minutes back per step (0: every report at `first`)
  uint32_t of(uint64_t j) const {
    if (first == 0) return 0;  // no observation time: the collector uses the receive time
    const uint64_t back = j / per * step;
    return back >= first ? 1 : static_cast<uint32_t>(first - back);
  }
};

// "MINUTE" (0: none) or "MINUTE/PER/STEP"; nothing if malformed.
std::optional<Minutes> parse_minutes(const std::string& text) {
  Minutes m;
  unsigned long long first = 0, per = 1, step = 0;
  char tail = 0;
  const int fields = std::sscanf(text.c_str(), "%llu/%llu/%llu%c", &first, &per, &step, &tail);
  if ((fields != 1 && fields != 3) || (first == 0 && fields == 3) || first > UINT32_MAX ||
      per == 0) {
    return std::nullopt;
  }
  if (fields == 1 && text.find('/') != std::string::npos) return std::nullopt;
  m.first = static_cast<uint32_t>(first);
  m.per = per;
  m.step = fields == 3 ? step : 0;
  return m;
}

std::string crafted_batch(uint64_t nonce, uint64_t first_id, size_t count, uint32_t metric,
                          uint32_t epsilon_micros, const Minutes& minutes) {
  std::vector<blur::Report> reports(count);
  for (size_t i = 0; i < count; ++i) {
    reports[i] = blur_test::scalar_report(
        first_id + i, metric, blur::MechanismId::kBinaryRandomizedResponse, epsilon_micros, 2, 1);
    reports[i].observed_minute = minutes.of(first_id - 1 + i);  // ids start at 1
  }
  std::string bytes(blur::kBatchHeaderSize + count * blur::kMaxEncodedScalarReportSize, '\0');
  size_t written = 0;
  if (blur::encode_batch(nonce, reports.data(), count, reinterpret_cast<uint8_t*>(bytes.data()),
                         bytes.size(), &written) != blur::Status::kOk) {
    return {};
  }
  bytes.resize(written);
  return bytes;
}

void record(Totals& totals, const httplib::Result& answer) {
  std::lock_guard<std::mutex> lock(totals.mutex);
  ++totals.batches;
  const auto body = answer && answer->status == 200
                        ? nlohmann::json::parse(answer->body, nullptr, false)
                        : nlohmann::json();
  if (!body.is_object() || !body.contains("accepted")) {
    ++totals.failed;
    if (totals.first_error.empty()) {
      totals.first_error = answer ? std::to_string(answer->status) + " " + answer->body
                                  : httplib::to_string(answer.error());
    }
    return;
  }
  totals.accepted += body["accepted"].get<uint64_t>();
  totals.duplicates += body["duplicates"].get<uint64_t>();
  if (body.contains("over_limit")) {
    totals.over_limit += body["over_limit"].get<uint64_t>();
    if (totals.limit.empty()) totals.limit = body["limit"].get<std::string>();
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool impersonate = argc == 10 && std::string(argv[9]) == "impersonate";
  if (argc != 9 && !impersonate) {
    std::fprintf(stderr,
                 "usage: %s URL METRIC EPSILON_MICROS FIRST_NONCE NONCES REPORTS MINUTE THREADS "
                 "[impersonate]\n",
                 argv[0]);
    return 2;
  }
  const std::string url = argv[1];
  const auto metric = static_cast<uint32_t>(std::strtoul(argv[2], nullptr, 10));
  const auto epsilon = static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10));
  const uint64_t first_nonce = std::strtoull(argv[4], nullptr, 10);
  const uint64_t nonces = std::strtoull(argv[5], nullptr, 10);
  const uint64_t reports = std::strtoull(argv[6], nullptr, 10);
  const auto minutes = parse_minutes(argv[7]);
  const int threads = std::atoi(argv[8]);
  if (!minutes) {
    std::fprintf(stderr, "MINUTE must be a minute or MINUTE/PER/STEP, not '%s'\n", argv[7]);
    return 2;
  }
  const char* first_id = std::getenv("BLUR_FIRST_REPORT_ID");
  const uint64_t first_report_id = first_id != nullptr ? std::strtoull(first_id, nullptr, 10) : 1;
  // Impersonation: the first nonce's token, enrolled once (a renewal per
  // batch would meet the per-device renewal limit first).
  std::string first_token;
  if (impersonate) {
    httplib::Client client(url);
    first_token = enroll(client, first_nonce);
    if (first_token.empty()) return 2;
  }

  Totals totals;
  std::atomic<uint64_t> next{0};  // the next nonce to post; a nonce's batches go in order
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      httplib::Client client(url);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      for (uint64_t k = next++; k < nonces; k = next++) {
        // No credentials at all for a collector run with --no-auth.
        const bool anonymous = std::getenv("BLUR_ENROLLMENT_SECRET") == nullptr &&
                               std::getenv("BLUR_DEVICE_TOKEN") == nullptr;
        const std::string token = anonymous     ? std::string()
                                  : impersonate ? first_token
                                                : enroll(client, first_nonce + k);
        if (!anonymous && token.empty()) std::exit(2);
        for (uint64_t sent = 0; sent < reports;) {
          const size_t count =
              static_cast<size_t>(std::min<uint64_t>(blur::kMaxReportsPerBatch, reports - sent));
          const std::string body =
              crafted_batch(first_nonce + k, first_report_id + sent, count, metric, epsilon, *minutes);
          record(totals, post_batch(client, body, token));
          sent += count;
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  const nlohmann::json out{{"batches", totals.batches},
                           {"accepted", totals.accepted},
                           {"duplicates", totals.duplicates},
                           {"over_limit", totals.over_limit},
                           {"limit", totals.limit},
                           {"failed", totals.failed},
                           {"first_error", totals.first_error}};
  std::printf("%s\n", out.dump().c_str());
  return totals.failed == 0 ? 0 : 1;
}
