#include "fleet.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>
#include <vector>

#include "device_life.h"
#include "enrollment.h"
#include "api/metric_estimate.h"
#include "ingest/batch_decoder.h"
#include "ingest/batch_validator.h"
#include "mechanisms/mechanism_spec.h"
#include "simulated_device.h"

namespace blur::sim {

namespace {

using collector::MetricConfig;

bool load_truth(const Options& o, uint32_t domain, std::vector<uint32_t>* truth,
                std::string* error) {
  if (!o.values_file.empty()) {
    std::ifstream in(o.values_file);
    if (!in) {
      *error = "cannot read " + o.values_file;
      return false;
    }
    std::string line;
    for (size_t number = 1; std::getline(in, line); ++number) {
      if (line.empty()) continue;
      char* end = nullptr;
      const unsigned long value = std::strtoul(line.c_str(), &end, 10);
      if (*end != '\0' || value >= domain) {
        *error = o.values_file + ":" + std::to_string(number) + ": expected an integer in [0, " +
                 std::to_string(domain) + ")";
        return false;
      }
      truth->push_back(static_cast<uint32_t>(value));
    }
    return true;
  }
  // Generated: value 1 with --true-rate for rr; uniform over the domain otherwise.
  std::mt19937_64 generator(o.seed);
  std::bernoulli_distribution one(o.true_rate);
  std::uniform_int_distribution<uint32_t> uniform(0, domain - 1);
  truth->resize(o.devices);
  for (auto& v : *truth) v = domain == 2 ? (one(generator) ? 1 : 0) : uniform(generator);
  return true;
}

void print_table(const Options& o, const nlohmann::json& estimate,
                 const std::vector<uint64_t>& true_counts) {
  const double n = static_cast<double>(estimate["n"].get<uint64_t>());
  std::vector<uint32_t> order(true_counts.size());
  for (uint32_t v = 0; v < order.size(); ++v) order[v] = v;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return true_counts[a] > true_counts[b]; });
  if (order.size() > 20) order.resize(20);
  std::printf("\n  Blur demo: %.0f devices, %s, epsilon = %s per report\n",
              n / std::max<uint32_t>(o.reports, 1), o.mechanism.c_str(), o.epsilon.c_str());
  std::printf("  +-------+------------+-----------+------------------+--------+\n");
  std::printf("  | value | true share | estimated | 95%% interval     | inside |\n");
  std::printf("  +-------+------------+-----------+------------------+--------+\n");
  int inside = 0;
  for (uint32_t v : order) {
    const auto& e = estimate["estimates"][v];
    const double truth = static_cast<double>(true_counts[v]) / n;
    const double low = e["fraction_ci95"][0], high = e["fraction_ci95"][1];
    const bool in = low <= truth && truth <= high;
    inside += in;
    std::printf("  | %5u | %10.4f | %9.4f | [%6.4f, %6.4f] | %6s |\n", v, truth,
                e["fraction"].get<double>(), low, high, in ? "yes" : "NO");
  }
  std::printf("  +-------+------------+-----------+------------------+--------+\n");
  std::printf("  truth inside the 95%% interval for %d of %zu values shown; the collector saw\n",
              inside, order.size());
  std::printf("  only randomized reports (standard error of a share: %.4f).\n",
              estimate["estimates"][order[0]]["stderr"].get<double>() / n);
}

// POSTs a batch. Network failures, 5xx and 429 (device_busy: an earlier
// attempt of this batch, abandoned by a client timeout, is still being
// committed) are retried with exponential backoff (the device keeps the
// reports until a 200); any other answer is final: a 4xx (409: a report id
// reused with other content, 400: a bad batch) will not change by resending.
Delivery post_batch(httplib::Client& client, const std::string& batch, const std::string& token,
                    int retries) {
  uint64_t resent = 0;
  std::string last;
  for (int attempt = 0; attempt <= retries; ++attempt) {
    if (attempt > 0) {
      ++resent;
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(50 << (attempt - 1), 2000)));
    }
    auto response = client.Post("/v1/reports", bearer(token), batch, "application/x-protobuf");
    if (!response) {
      last = httplib::to_string(response.error());
      continue;
    }
    const std::string answer = std::to_string(response->status) + " " + response->body;
    if (response->status >= 500 || response->status == 429) {
      last = answer;
      continue;
    }
    Delivery delivery;
    delivery.kind = Delivery::Kind::kRefused;
    delivery.resent = resent;
    if (response->status != 200) {
      delivery.error = "collector answered " + answer;
      return delivery;
    }
    const auto body = nlohmann::json::parse(response->body, nullptr, false);
    if (!body.is_object() || !body.contains("accepted") || !body.contains("duplicates") ||
        !body["accepted"].is_number_unsigned() || !body["duplicates"].is_number_unsigned()) {
      delivery.error = "collector answered 200 without the accepted/duplicates counts: " + answer;
      return delivery;
    }
    delivery.kind = Delivery::Kind::kStored;
    delivery.accepted = body["accepted"].get<uint64_t>();
    delivery.duplicates = body["duplicates"].get<uint64_t>();
    // Over the metric's contribution bound (over_limit), held back by its
    // quarantine of new devices (quarantined) or of a retired metric
    // (retired): refused, and resending would be refused again, so these
    // reports are settled too (counted together).
    for (const char* settled : {"over_limit", "quarantined", "retired"}) {
      if (!body.contains(settled)) continue;
      if (!body[settled].is_number_unsigned()) {
        delivery.error =
            "collector answered 200 with a malformed " + std::string(settled) + ": " + answer;
        delivery.kind = Delivery::Kind::kRefused;
        return delivery;
      }
      delivery.over_limit += body[settled].get<uint64_t>();
    }
    return delivery;
  }
  return {Delivery::Kind::kUnreachable,
          0,
          0,
          0,
          resent,
          "no answer but failures after " + std::to_string(retries + 1) + " attempts: " + last};
}

// Totals over the fleet; devices run on several threads.
struct Tally {
  std::atomic<uint64_t> devices_done{0}, acknowledged{0}, accepted{0}, duplicates{0}, over_limit{0},
      resent{0}, pending{0}, failed{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::string first_error;

  // Returns how many devices are done.
  uint64_t add(uint64_t index, const DeviceOutcome& d) {
    acknowledged += d.acknowledged;
    accepted += d.accepted;
    duplicates += d.duplicates;
    over_limit += d.over_limit;
    resent += d.resent;
    pending += d.pending;
    const uint64_t done = ++devices_done;
    if (d.error.empty()) return done;
    ++failed;
    // A collector that stays unreachable fails every device the same way.
    if (d.unreachable) stop = true;
    std::lock_guard<std::mutex> lock(mutex);
    if (first_error.empty()) first_error = "device " + std::to_string(index) + ": " + d.error;
    return done;
  }
};

}  // namespace

int fleet(const Options& o, std::ostream& summary) {
  std::string error;
  const auto metric = metric_of(o, &error);
  if (!metric) return fail(error);
  // (A memoized metric is built by each device's Client, which checks it.)
  if (metric->longitudinal_epsilon_micros == 0 && !device_mechanism(*metric).ok()) {
    return fail("the SDK cannot build this metric");
  }
  // A word-discovery metric records words from --values; the others integers.
  const bool words_metric = collector::mechanism_spec(metric->mechanism).discovers_words;
  std::vector<std::string> words;
  std::vector<uint32_t> truth;
  if (words_metric) {
    if (o.values_file.empty()) return fail("a word-discovery metric needs --values: one word per device");
    if (!load_words(o.values_file, &words, &error)) return fail(error);
    truth.assign(words.size(), 0);
  } else if (!load_truth(o, metric->domain_size, &truth, &error)) {
    return fail(error);
  }
  auto recorder = [&](uint64_t i) {
    return words_metric ? record_word(*metric, words[i]) : record_value(*metric, truth[i]);
  };
  const bool numeric = collector::is_numeric(metric->mechanism);
  // Counted per report: each device reports its value o.reports times.
  std::vector<uint64_t> true_counts(numeric || words_metric ? 0 : metric->domain_size, 0);
  double true_sum = 0;
  for (uint32_t v : truth) {
    if (!true_counts.empty()) true_counts[v] += o.reports;
    true_sum += v;
  }
  const double true_mean = truth.empty() ? 0.0 : true_sum / static_cast<double>(truth.size());
  const uint64_t devices = truth.size();
  const uint64_t reports = devices * o.reports;
  const auto budget = static_cast<uint64_t>(o.budget_nats * kEpsilonMicrosPerNat);
  Tally tally;
  auto truth_json = [&](nlohmann::json* out) {
    if (numeric) {
      (*out)["true_mean"] = true_mean;
    } else if (!words_metric) {
      (*out)["true_counts"] = true_counts;
    }
  };

  if (o.offline) {
    // The collector's own path, in process: decode, validate, count, estimate.
    collector::Aggregate aggregate(*metric);
    const Deliver deliver = offline_delivery(*metric, &aggregate);
    for (uint64_t i = 0; i < devices; ++i) {
      const DeviceOutcome outcome = live(o, i, *metric, budget, recorder(i), deliver);
      if (!outcome.error.empty()) return fail("device " + std::to_string(i) + ": " + outcome.error);
    }
    // Every device sent o.reports reports of its one value.
    collector::DeviceCounts counts;
    counts.reports = reports;
    counts.devices = devices;
    counts.sum_squares = static_cast<double>(devices) * o.reports * o.reports;
    counts.max_reports = o.reports;
    nlohmann::json out = collector::estimate_json(
        aggregate, collector::DeviceClustering::from_counts(aggregate.reports(), counts, 1),
        *collector::post_processing_from_name(o.postprocess));
    truth_json(&out);
    if (o.table && !true_counts.empty()) {
      print_table(o, out, true_counts);
    } else {
      summary << out.dump() << "\n";
    }
    return 0;
  }

  std::atomic<uint64_t> next{0};
  const auto start = std::chrono::steady_clock::now();
  std::fprintf(stderr, "blur-device-sim: %llu devices, %u report%s each -> %s (%d connections)\n",
               static_cast<unsigned long long>(devices), o.reports, o.reports == 1 ? "" : "s",
               o.collector.c_str(), o.threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < o.threads; ++t) {
    workers.emplace_back([&] {
      httplib::Client client(o.collector);
      if (!o.ca_file.empty()) client.set_ca_cert_path(o.ca_file.c_str());
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      client.set_connection_timeout(5);
      DeviceCredentials credentials(client, o);
      const Deliver deliver = [&](uint64_t device_nonce, const std::string& batch, size_t) {
        const EnrollResult enrolled = credentials.token_for(device_nonce);
        if (enrolled.kind != EnrollResult::Kind::kEnrolled) {
          Delivery failed;
          failed.kind = enrolled.kind == EnrollResult::Kind::kUnreachable
                            ? Delivery::Kind::kUnreachable
                            : Delivery::Kind::kRefused;
          failed.error = enrolled.error;
          return failed;
        }
        return post_batch(client, batch, enrolled.token, o.retries);
      };
      for (uint64_t i = next++; i < devices && !tally.stop; i = next++) {
        const uint64_t finished =
            tally.add(i, live(o, i, *metric, budget, recorder(i), deliver));
        if (finished % std::max<uint64_t>(devices / 10, 1) == 0) {
          std::fprintf(stderr, "  %3llu%%  %llu devices reported\n",
                       static_cast<unsigned long long>(finished * 100 / devices),
                       static_cast<unsigned long long>(finished));
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr,
               "blur-device-sim: %llu reports acknowledged (%llu new, %llu already stored%s) in "
               "%.2f s (%.0f devices/s)\n",
               static_cast<unsigned long long>(tally.acknowledged.load()),
               static_cast<unsigned long long>(tally.accepted.load()),
               static_cast<unsigned long long>(tally.duplicates.load()),
               tally.over_limit == 0
                   ? ""
                   : (", " + std::to_string(tally.over_limit.load()) + " over the limit").c_str(),
               seconds, static_cast<double>(tally.devices_done.load()) / seconds);
  const bool complete = tally.failed == 0 && tally.devices_done == devices &&
                        tally.acknowledged == reports &&
                        tally.accepted + tally.duplicates + tally.over_limit == reports;
  if (!complete) {
    std::fprintf(stderr,
                 "blur-device-sim: %llu of %llu reports acknowledged; %llu devices failed, "
                 "%llu not run, %llu reports left pending; first error: %s\n",
                 static_cast<unsigned long long>(tally.acknowledged.load()),
                 static_cast<unsigned long long>(reports),
                 static_cast<unsigned long long>(tally.failed.load()),
                 static_cast<unsigned long long>(devices - tally.devices_done),
                 static_cast<unsigned long long>(tally.pending.load()),
                 tally.first_error.empty() ? "none" : tally.first_error.c_str());
  }
  if (!o.table || true_counts.empty() || !complete) {
    nlohmann::json out{{"seed", o.seed},
                       {"devices", devices},
                       {"reports", reports},
                       {"acknowledged", tally.acknowledged.load()},
                       {"accepted", tally.accepted.load()},
                       {"duplicates", tally.duplicates.load()},
                       {"over_limit", tally.over_limit.load()},
                       {"resent", tally.resent.load()},
                       {"pending", tally.pending.load()},
                       {"failed_devices", tally.failed.load()}};
    truth_json(&out);
    summary << out.dump() << "\n";
    return complete ? 0 : 1;
  }
  httplib::Client client(o.collector);
  if (!o.ca_file.empty()) client.set_ca_cert_path(o.ca_file.c_str());
  auto response = client.Get(
      "/v1/metrics/" + std::to_string(o.metric) + "/estimate?postprocess=" + o.postprocess,
      bearer(o.reader_token));
  if (!response || response->status != 200) return fail("cannot fetch the estimate") - 1;
  print_table(o, nlohmann::json::parse(response->body), true_counts);
  return 0;
}

}  // namespace blur::sim
