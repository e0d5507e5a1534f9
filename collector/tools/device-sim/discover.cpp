#include "discover.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include <httplib.h>

#include "device_life.h"
#include "enrollment.h"
#include "fleet.h"
#include "discovery/word_discovery.h"

namespace blur::sim {

namespace {

using collector::MetricConfig;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The devices send to a collector (the fleet command's delivery, with its
// retries and enrollment); then the collector's estimate with top_k words.
int discover_with_collector(const Options& o, const MetricConfig& metric, EpsilonMicros charged) {
  const int delivered = fleet(o, std::cerr);
  if (delivered != 0) return delivered;
  httplib::Client client(o.collector);
  if (!o.ca_file.empty()) client.set_ca_cert_path(o.ca_file.c_str());
  // Discovery's work grows with top_k (the beam), not with the reports:
  // seconds on a release build, minutes under sanitizers for a large k.
  client.set_read_timeout(std::chrono::seconds(600));
  auto response = client.Get("/v1/metrics/" + std::to_string(metric.id) +
                                 "/estimate?top_k=" + std::to_string(o.top_k),
                             bearer(o.reader_token));
  if (!response) return fail("cannot reach " + o.collector + " for the estimate") - 1;
  if (response->status != 200) {
    return fail("the collector answered " + std::to_string(response->status) + " " +
                response->body) - 1;
  }
  auto out = nlohmann::json::parse(response->body, nullptr, false);
  if (!out.is_object() || !out.contains("words")) {
    return fail("the collector's estimate has no words: " + response->body) - 1;
  }
  out["epsilon_charged"] = charged / 1e6;
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace

int discover(const Options& given) {
  Options o = given;
  if (o.mechanism != "pem" && o.mechanism != "sfp") return fail("--mechanism must be pem or sfp");
  if (o.values_file.empty()) return fail("--values FILE is required: one word per device");
  std::string error;
  std::vector<std::string> words;
  if (!load_words(o.values_file, &words, &error)) return fail(error);
  if (o.max_length == 0) {
    size_t longest = 2;
    for (const std::string& w : words) longest = std::max(longest, w.size());
    o.domain = static_cast<uint32_t>(longest);
  } else {
    o.domain = o.max_length;
  }
  const auto metric = metric_of(o, &error);
  if (!metric) return fail(error);
  const auto mechanism = device_mechanism(*metric);
  if (!mechanism.ok()) return fail(std::string("the SDK refuses this metric: ") +
                                   status_name(mechanism.status()));
  for (const std::string& w : words) {
    if (w.size() > metric->domain_size) {
      return fail("the word \"" + w + "\" is longer than --max-length " +
                  std::to_string(metric->domain_size));
    }
  }
  if (!o.offline) return discover_with_collector(o, *metric, epsilon_charged(mechanism.value()));
  const auto budget = static_cast<uint64_t>(o.budget_nats * kEpsilonMicrosPerNat);

  // Devices on every core, each thread counting into its own aggregate.
  const auto start = std::chrono::steady_clock::now();
  const unsigned threads = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  std::vector<collector::Aggregate> aggregates(threads, collector::Aggregate(*metric));
  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::string first_error;
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      const Deliver deliver = offline_delivery(*metric, &aggregates[t]);
      for (uint64_t i = next++; i < words.size() && !failed; i = next++) {
        const DeviceOutcome outcome =
            live(o, i, *metric, budget, record_word(*metric, words[i]), deliver);
        if (!outcome.error.empty()) {
          std::lock_guard<std::mutex> lock(mutex);
          if (!failed.exchange(true)) first_error = "device " + std::to_string(i) + ": " + outcome.error;
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  if (failed) return fail(first_error) - 1;
  for (unsigned t = 1; t < threads; ++t) aggregates[0].merge(aggregates[t]);
  const collector::Aggregate& aggregate = aggregates[0];
  const double device_seconds = seconds_since(start);

  const auto decode_start = std::chrono::steady_clock::now();
  collector::DiscoveryOptions options;
  options.top_k = o.top_k;
  options.beam = o.beam;
  const collector::Discovery found =
      collector::discover_words(*metric, aggregate.tally(), aggregate.reports(), options);
  const double decode_seconds = seconds_since(decode_start);
  std::fprintf(stderr,
               "blur-device-sim: %zu devices in %.2f s; discovery over %llu reports: %u "
               "candidates in %.3f s\n",
               words.size(), device_seconds, static_cast<unsigned long long>(aggregate.reports()),
               found.candidates_evaluated, decode_seconds);

  nlohmann::json out{{"mechanism", o.mechanism},
                     {"n", aggregate.reports()},
                     {"epsilon_charged", epsilon_charged(mechanism.value()) / 1e6},
                     {"max_length", metric->domain_size},
                     {"top_k", o.top_k},
                     {"decode_seconds", decode_seconds},
                     {"words", nlohmann::json::array()}};
  for (const collector::DiscoveredWord& w : found.words) {
    out["words"].push_back({{"word", w.word},
                            {"estimate", w.estimate.count},
                            {"stderr", w.estimate.std_error},
                            {"ci95", {w.estimate.ci95_low, w.estimate.ci95_high}}});
  }
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace blur::sim
