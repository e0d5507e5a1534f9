// A word-discovery attacker for the read-isolation test: device nonces that
// each post uniformly random pem reports (random level, seed and bucket:
// one distinct tally cell each, the costliest reports for the decoder's
// sparse levels) within the contribution bound, PER_HOUR reports observed
// in each of the HOURS hours before now, encoded with the SDK's own encoder,
// 64 per batch.
//
//   pem_reports_poster URL METRIC EPSILON_MICROS DOMAIN FIRST_NONCE NONCES HOURS PER_HOUR THREADS
//
// Each nonce is enrolled first (POST /v1/enroll with $BLUR_ENROLLMENT_SECRET,
// as a device with the app's secret can) and posts with its own token.
// Prints one JSON line: what the collector answered in total (accepted,
// duplicates, over_limit, failed batches, the first error) and the time.
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "blur/discovery/prefix_extension.h"
#include "blur/report/report_encoding.h"
#include "device_reports.h"
#include "fake_enrollment.h"

namespace {

struct Totals {
  std::mutex mutex;
  uint64_t batches = 0, accepted = 0, duplicates = 0, over_limit = 0, failed = 0;
  std::string first_error;
};

// A device token for `nonce` (tests/collector/fake_enrollment.h).
std::string enroll(httplib::Client& client, uint64_t nonce) {
  return blur_test::enroll_fake_device(client, nonce, "pem");
}

struct Shape {
  uint32_t metric, epsilon, domain;
};

// Uniformly random pem reports observed at `minutes` (one report each).
std::string random_batch(uint64_t nonce, uint64_t first_id, const std::vector<uint32_t>& minutes,
                         const Shape& shape, std::mt19937_64& rng) {
  const uint32_t levels = blur::PrefixExtension::levels(shape.domain);
  const uint32_t buckets = 1u << blur::PrefixExtension::bucket_bits(shape.epsilon);
  std::vector<blur::Report> reports(minutes.size());
  for (size_t i = 0; i < minutes.size(); ++i) {
    reports[i] = blur_test::scalar_report(first_id + i, shape.metric,
                                          blur::MechanismId::kPrefixExtension, shape.epsilon,
                                          shape.domain, static_cast<uint32_t>(rng() % buckets));
    const auto level = static_cast<uint32_t>(rng() % levels);
    const auto seed = static_cast<uint32_t>(rng() % blur::kPrefixHashSeeds);
    reports[i].payload.seed = level << 16 | seed;
    reports[i].observed_minute = minutes[i];
  }
  std::string bytes(blur::kBatchHeaderSize + minutes.size() * blur::kMaxEncodedReportSize, '\0');
  size_t written = 0;
  if (blur::encode_batch(nonce, reports.data(), reports.size(),
                         reinterpret_cast<uint8_t*>(bytes.data()), bytes.size(),
                         &written) != blur::Status::kOk) {
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
  if (body.contains("over_limit")) totals.over_limit += body["over_limit"].get<uint64_t>();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 10) {
    std::fprintf(stderr,
                 "usage: %s URL METRIC EPSILON_MICROS DOMAIN FIRST_NONCE NONCES HOURS PER_HOUR "
                 "THREADS\n",
                 argv[0]);
    return 2;
  }
  const std::string url = argv[1];
  const Shape shape{static_cast<uint32_t>(std::strtoul(argv[2], nullptr, 10)),
                    static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10)),
                    static_cast<uint32_t>(std::strtoul(argv[4], nullptr, 10))};
  const uint64_t first_nonce = std::strtoull(argv[5], nullptr, 10);
  const uint64_t nonces = std::strtoull(argv[6], nullptr, 10);
  const uint64_t hours = std::strtoull(argv[7], nullptr, 10);
  const uint64_t per_hour = std::strtoull(argv[8], nullptr, 10);
  const int threads = std::atoi(argv[9]);
  // Each hour's reports in the middle of that hour (its own hourly bucket).
  const auto now_minute = static_cast<uint32_t>(std::time(nullptr) / 60);
  std::vector<uint32_t> minutes;
  for (uint64_t h = 0; h < hours; ++h) {
    const uint32_t minute = (now_minute / 60 - static_cast<uint32_t>(h)) * 60 - 30;
    for (uint64_t r = 0; r < per_hour; ++r) minutes.push_back(minute);
  }

  Totals totals;
  std::atomic<uint64_t> next{0};  // the next nonce to post; a nonce's batches go in order
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      std::mt19937_64 rng(first_nonce * 1000 + static_cast<uint64_t>(t));
      httplib::Client client(url);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      client.set_read_timeout(std::chrono::seconds(120));
      for (uint64_t k = next++; k < nonces; k = next++) {
        const std::string token = enroll(client, first_nonce + k);
        if (token.empty()) std::exit(2);
        for (size_t sent = 0; sent < minutes.size(); sent += blur::kMaxReportsPerBatch) {
          const std::vector<uint32_t> chunk(
              minutes.begin() + static_cast<std::ptrdiff_t>(sent),
              minutes.begin() + static_cast<std::ptrdiff_t>(
                                    std::min(minutes.size(), sent + blur::kMaxReportsPerBatch)));
          const std::string body = random_batch(first_nonce + k, sent + 1, chunk, shape, rng);
          record(totals, client.Post("/v1/reports", {{"Authorization", "Bearer " + token}}, body,
                                     "application/x-protobuf"));
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const nlohmann::json out{{"batches", totals.batches},
                           {"accepted", totals.accepted},
                           {"duplicates", totals.duplicates},
                           {"over_limit", totals.over_limit},
                           {"failed", totals.failed},
                           {"first_error", totals.first_error},
                           {"seconds", seconds}};
  std::printf("%s\n", out.dump().c_str());
  return totals.failed == 0 ? 0 : 1;
}
