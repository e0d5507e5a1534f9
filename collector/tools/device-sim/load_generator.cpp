#include "load_generator.h"

#include <netdb.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "auth/device_token.h"
#include "enrollment.h"
#include "http_load.h"
#include "ingest/batch_decoder.h"
#include "simulated_device.h"

namespace blur::sim {

namespace {

constexpr uint32_t kPoolSize = 256;  // distinct batches, each from its own device
// Separates the load's nonce sequence from fleet device seeds of the same seed.
constexpr uint64_t kNonceDomain = 0x6c6f61642d6e6f6eull;  // "load-non"

struct Url {
  std::string host;
  std::string port;
};

bool parse_url(const std::string& url, Url* out, std::string* error) {
  static const std::string kScheme = "http://";
  if (url.compare(0, kScheme.size(), kScheme) != 0) {
    *error = "load needs an http:// collector URL, not " + url;
    return false;
  }
  std::string rest = url.substr(kScheme.size());
  rest = rest.substr(0, rest.find('/'));
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos || rest.back() == ']') {
    out->host = rest;
    out->port = "80";
  } else {
    out->host = rest.substr(0, colon);
    out->port = rest.substr(colon + 1);
  }
  if (out->host.size() > 2 && out->host.front() == '[') {
    out->host = out->host.substr(1, out->host.size() - 2);
  }
  return !out->host.empty();
}

bool resolve(const Url& url, LoadTarget* target, std::string* error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int status = getaddrinfo(url.host.c_str(), url.port.c_str(), &hints, &found);
  if (status != 0 || found == nullptr) {
    *error = "cannot resolve " + url.host + ": " + gai_strerror(status);
    return false;
  }
  std::memcpy(&target->address, found->ai_addr, found->ai_addrlen);
  target->address_length = found->ai_addrlen;
  freeaddrinfo(found);
  return true;
}

// The metrics a batch names: --metrics of them (at most one per report),
// ids --metric, --metric + 1, ..., each as --mechanism, --epsilon, --domain.
bool batch_metrics(const Options& o, std::vector<collector::MetricConfig>* metrics,
                   std::string* error) {
  const uint32_t count = std::min(o.load_metrics, o.batch);
  if (uint64_t{o.metric} + count - 1 > UINT32_MAX) {
    *error = "--metric + --metrics passes the largest metric id";
    return false;
  }
  for (uint32_t k = 0; k < count; ++k) {
    Options one = o;
    one.metric = o.metric + k;
    auto metric = metric_of(one, error);
    if (!metric) return false;
    metrics->push_back(*metric);
  }
  return true;
}

// kPoolSize devices, each recording `batch` reports spread evenly over the
// metrics (the first batch % metrics take one more) and handing its queue
// over as one batch, wrapped in an HTTP request. A Client configures at
// most kMaxClientMetrics metrics: the device restarts with the next ones
// (its queue and report ids go on).
bool build_pool(const Options& o, const std::vector<collector::MetricConfig>& metrics,
                const Url& url, std::vector<LoadRequest>* pool, std::string* error) {
  const collector::MetricConfig& metric = metrics.front();
  const uint32_t blocks = flash_blocks_for(metric, o.batch);
  if (blocks == 0) {
    *error = "a simulated report queue (at most " + std::to_string(ReportQueue::kMaxBlocks) +
             " blocks of " + std::to_string(SimPort::kBlockSize) + " bytes) cannot hold " +
             std::to_string(o.batch) + " reports of this metric: use a smaller --batch";
    return false;
  }
  const auto mechanism = device_mechanism(metric);
  if (!mechanism.ok()) {
    *error = std::string("the SDK cannot build this metric: ") + status_name(mechanism.status());
    return false;
  }
  const uint64_t budget = uint64_t{o.batch} * epsilon_charged(mechanism.value());
  std::mt19937_64 values(o.seed);
  std::uniform_int_distribution<uint32_t> value(0, metric.domain_size - 1);
  // With authentication, a device token per request is written over the
  // placeholder (tokens have one length).
  const std::string authorization = "Authorization: Bearer ";
  const std::string token_field =
      o.enrollment_secret.empty()
          ? ""
          : authorization + std::string(collector::auth::kDeviceTokenLength, 'x') + "\r\n";
  const std::string head = "POST /v1/reports HTTP/1.1\r\nHost: " + url.host + ":" + url.port +
                           "\r\n" + token_field +
                           "Content-Type: application/x-protobuf\r\nContent-Length: ";
  const size_t per_metric = o.batch / metrics.size(), extra = o.batch % metrics.size();
  std::string body;
  for (uint32_t d = 0; d < kPoolSize; ++d) {
    SimulatedDevice device(device_seed(o.seed, d), blocks);
    Status status = Status::kOk;
    for (size_t first = 0; first < metrics.size() && status == Status::kOk;
         first += kMaxClientMetrics) {
      const std::vector<collector::MetricConfig> group(
          metrics.begin() + static_cast<ptrdiff_t>(first),
          metrics.begin() + static_cast<ptrdiff_t>(std::min(metrics.size(), first + kMaxClientMetrics)));
      status = first == 0 ? device.boot(budget, group) : device.restart(group);
      for (size_t m = first; m < first + group.size() && status == Status::kOk; ++m) {
        for (size_t r = 0; r < per_metric + (m < extra ? 1 : 0) && status == Status::kOk; ++r) {
          status = device.record(metrics[m].id, value(values));
        }
      }
    }
    size_t count = 0;
    uint64_t token = 0;
    if (status == Status::kOk) status = device.pending_batch(&body, &count, &token);
    if (status != Status::kOk || count != o.batch) {
      *error = "pool device " + std::to_string(d) + ": " +
               (status != Status::kOk ? status_name(status) : "short batch");
      return false;
    }
    // The device's own nonce where we expect it: the offset is right.
    const size_t offset =
        collector::device_nonce_offset(reinterpret_cast<const uint8_t*>(body.data()), body.size());
    uint64_t nonce = 0;
    for (int i = 7; offset != 0 && i >= 0; --i) {
      nonce = nonce << 8 | static_cast<uint8_t>(body[offset + i]);
    }
    if (offset == 0 || nonce != device.device_nonce()) {
      *error = "cannot find the device nonce in an encoded batch";
      return false;
    }
    const std::string headers = head + std::to_string(body.size()) + "\r\n\r\n";
    const size_t token_at = token_field.empty() ? 0 : headers.find(authorization) + authorization.size();
    pool->push_back({headers + body, headers.size() + offset, o.batch, token_at});
  }
  return true;
}

// Enrolls the nonces of the first o.load_devices requests (before the clock
// starts: enrollment is not what the load measures), on 8 connections.
// Says what it is doing: a progress line a second, and why it waits (the
// collector's refusal: status, Retry-After and body) when it does.
bool enroll_all(const Options& o, const std::function<uint64_t(uint64_t)>& nonce,
                std::vector<std::string>* tokens, std::string* error) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  tokens->assign(o.load_devices, std::string());
  std::atomic<uint64_t> next{0}, done{0};
  std::mutex mutex;
  std::condition_variable finished;
  bool stop = false;
  std::string waiting_for;  // the latest refusal that made a worker wait
  std::vector<std::thread> workers;
  for (int t = 0; t < 8; ++t) {
    workers.emplace_back([&] {
      httplib::Client client(o.collector);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);  // else each POST waits out a delayed ACK (~40 ms)
      const auto note = [&](const std::string& why) {
        std::lock_guard lock(mutex);
        waiting_for = why;
      };
      for (uint64_t i = next++; i < o.load_devices; i = next++) {
        EnrollResult enrolled = enroll(client, o.enrollment_secret, nonce(i), o.retries, note);
        if (enrolled.kind != EnrollResult::Kind::kEnrolled ||
            enrolled.token.size() != collector::auth::kDeviceTokenLength) {
          std::lock_guard lock(mutex);
          if (error->empty()) error->assign(enrolled.error.empty() ? "a token of the wrong length" : enrolled.error);
          next = o.load_devices;
          return;
        }
        (*tokens)[i] = std::move(enrolled.token);
        ++done;
      }
    });
  }
  std::thread reporter([&] {
    uint64_t last = 0;
    std::unique_lock lock(mutex);
    while (!finished.wait_for(lock, std::chrono::seconds(1), [&] { return stop; })) {
      const uint64_t now_done = done;
      std::fprintf(stderr, "blur-device-sim: enrolling: %llu of %llu device nonces, %llu/s\n",
                   static_cast<unsigned long long>(now_done),
                   static_cast<unsigned long long>(o.load_devices),
                   static_cast<unsigned long long>(now_done - last));
      if (!waiting_for.empty()) {
        std::fprintf(stderr, "blur-device-sim: enrollment waits: %s\n", waiting_for.c_str());
        waiting_for.clear();
      }
      last = now_done;
    }
  });
  for (auto& w : workers) w.join();
  {
    std::lock_guard lock(mutex);
    stop = true;
  }
  finished.notify_all();
  reporter.join();
  if (!error->empty()) {
    if (error->find(" 429 ") != std::string::npos || error->find(": 429") != std::string::npos) {
      *error += " (the collector's new-device limits, --enrollments-per-secret and "
                "--enrollments-per-address, are below --devices " +
                std::to_string(o.load_devices) + ": raise them or lower --devices)";
    }
    return false;
  }
  std::fprintf(stderr, "blur-device-sim: enrolled %llu device nonces in %.1f s\n",
               static_cast<unsigned long long>(o.load_devices),
               std::chrono::duration<double>(Clock::now() - start).count());
  return true;
}

double percentile_ms(std::vector<uint32_t>& latency_us, double q) {
  if (latency_us.empty()) return 0;
  const size_t k = std::min(latency_us.size() - 1,
                            static_cast<size_t>(q * static_cast<double>(latency_us.size())));
  std::nth_element(latency_us.begin(), latency_us.begin() + static_cast<ptrdiff_t>(k),
                   latency_us.end());
  return latency_us[k] / 1000.0;
}

}  // namespace

int load(Options o) {
  std::string error;
  std::vector<collector::MetricConfig> metrics;
  if (!batch_metrics(o, &metrics, &error)) return fail(error);
  Url url;
  LoadTarget target;
  if (!parse_url(o.collector, &url, &error) || !resolve(url, &target, &error)) return fail(error);
  if (!resolve_seed(&o, &error)) return fail(error);
  std::vector<LoadRequest> pool;
  if (!build_pool(o, metrics, url, &pool, &error)) return fail(error);
  if (!o.save_batch.empty()) {
    const size_t body = pool[0].bytes.find("\r\n\r\n") + 4;
    std::ofstream out(o.save_batch, std::ios::binary);
    out << pool[0].bytes.substr(body);
    if (!out.flush()) return fail("cannot write " + o.save_batch);
    std::printf("%s: %zu bytes, %u reports, device nonce at offset %zu\n", o.save_batch.c_str(),
                pool[0].bytes.size() - body, o.batch, pool[0].nonce_offset - body);
    return 0;
  }
  target.duration_seconds = o.duration;
  target.connections = o.connections;
  // A bijection of the sequence number (device_seed is SplitMix64's
  // finalizer over seed * odd + sequence): no nonce twice in a run, and runs
  // with independent seeds overlap with probability ~ requests / 2^64.
  const uint64_t key = o.seed ^ kNonceDomain;
  target.nonce = [key](uint64_t sequence) { return device_seed(key, sequence); };
  std::vector<std::string> tokens;
  if (!o.enrollment_secret.empty()) {
    if (!enroll_all(o, target.nonce, &tokens, &error)) return fail(error);
    target.token = [&tokens](uint64_t sequence) -> const std::string& { return tokens[sequence]; };
    target.max_requests = tokens.size();
  }
  target.rate = o.rate;
  if (!o.start_file.empty()) {
    std::fprintf(stderr, "blur-device-sim: ready; waiting for %s to start sending\n",
                 o.start_file.c_str());
    while (access(o.start_file.c_str(), F_OK) != 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  std::fprintf(stderr,
               "blur-device-sim: load %s for %.1f s: %d connections, %u reports per request "
               "of %zu metrics (%u..%u; %zu distinct batches of %zu bytes)%s\n",
               o.collector.c_str(), o.duration, o.connections, o.batch, metrics.size(),
               metrics.front().id, metrics.back().id, pool.size(),
               pool[0].bytes.size() - pool[0].bytes.find("\r\n\r\n") - 4,
               o.rate > 0 ? (", paced at " + std::to_string(o.rate) + " requests/s").c_str() : "");
  LoadResult r;
  if (!run_http_load(pool, target, &r, &error)) return fail(error);
  if (r.sent == target.max_requests && r.elapsed_seconds + 0.5 < o.duration) {
    std::fprintf(stderr,
                 "blur-device-sim: sending ended after %.1f s: the %llu enrolled device nonces "
                 "were used up (one per request; raise --devices)\n",
                 r.elapsed_seconds, static_cast<unsigned long long>(target.max_requests));
  }

  const double rate = r.elapsed_seconds > 0 ? 1.0 / r.elapsed_seconds : 0;
  const uint64_t ok = r.statuses[200];
  // Failed: requests answered with anything but 200, or never answered.
  const uint64_t failed_requests = r.sent - ok;
  const double p50 = percentile_ms(r.latency_us, 0.50);
  const double p99 = percentile_ms(r.latency_us, 0.99);
  const double max =
      r.latency_us.empty() ? 0 : *std::max_element(r.latency_us.begin(), r.latency_us.end()) / 1e3;
  nlohmann::json statuses = nlohmann::json::object();
  nlohmann::json first_errors = nlohmann::json::object();
  for (size_t s = 0; s < r.statuses.size(); ++s) {
    if (r.statuses[s] == 0) continue;
    statuses[std::to_string(s)] = r.statuses[s];
    if (!r.first_body[s].empty()) first_errors[std::to_string(s)] = r.first_body[s];
  }
  const bool clean = ok == r.sent && r.lost == 0;
  if (o.json) {
    nlohmann::json out{{"seed", o.seed},
                       {"duration_s", r.elapsed_seconds},
                       {"connections", o.connections},
                       {"batch", o.batch},
                       {"metrics", metrics.size()},
                       {"requests_sent", r.sent},
                       {"requests_answered", r.answered},
                       {"requests_failed", failed_requests},
                       {"requests_per_s", static_cast<double>(r.answered) * rate},
                       {"reports_sent", r.reports_sent},
                       {"reports_acknowledged", r.accepted},
                       {"reports_per_s", static_cast<double>(r.accepted) * rate},
                       {"reports_over_limit", r.over_limit},
                       {"reports_duplicate", r.duplicates},
                       {"reports_quarantined", r.quarantined},
                       {"latency_ms", {{"p50", p50}, {"p99", p99}, {"max", max}}},
                       {"status", statuses},
                       {"first_error_body", first_errors},
                       {"lost", r.lost},
                       {"connect_failures", r.connect_failures}};
    if (o.rate > 0) out["rate"] = o.rate;
    if (!r.first_error.empty()) out["first_error"] = r.first_error;
    std::cout << out.dump() << "\n";
  } else {
    const auto u = [](uint64_t n) { return static_cast<unsigned long long>(n); };
    std::printf("load: %.2f s, %d connections, %u reports of %zu metrics per request, seed %llu\n",
                r.elapsed_seconds, o.connections, o.batch, metrics.size(), u(o.seed));
    std::printf("  requests      %llu answered of %llu sent, %.0f/s; %llu failed (not 200)\n",
                u(r.answered), u(r.sent), static_cast<double>(r.answered) * rate,
                u(failed_requests));
    std::printf("  accepted      %llu reports, %.0f/s (sum of \"accepted\" in 200 answers)\n",
                u(r.accepted), static_cast<double>(r.accepted) * rate);
    std::printf("  refused       %llu reports over the contribution bound, %llu duplicates, "
                "%llu quarantined (200 answers)\n",
                u(r.over_limit), u(r.duplicates), u(r.quarantined));
    std::printf("  latency       p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", p50, p99, max);
    std::printf("  status       ");
    for (auto& [status, count] : statuses.items()) {
      std::printf(" %s: %llu", status.c_str(), u(count.get<uint64_t>()));
    }
    std::printf("\n");
    for (auto& [status, body] : first_errors.items()) {
      std::printf("  first %s: %s\n", status.c_str(), body.get<std::string>().c_str());
    }
    if (r.lost != 0 || r.connect_failures != 0) {
      std::printf(
          "  lost          %llu requests (connection failed before an answer); %llu "
          "failed connects; first: %s\n",
          u(r.lost), u(r.connect_failures), r.first_error.c_str());
    }
  }
  if (r.over_limit != 0) {
    std::fprintf(stderr,
                 "blur-device-sim: %llu reports were refused over the contribution bound: a "
                 "batch holds up to %zu reports per metric and device, more than the "
                 "collector's max_reports_per_bucket (raise --metrics or lower --batch)\n",
                 static_cast<unsigned long long>(r.over_limit),
                 o.batch / metrics.size() + (o.batch % metrics.size() != 0 ? 1 : 0));
  }
  return clean ? 0 : 1;
}

}  // namespace blur::sim
