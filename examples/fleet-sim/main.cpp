// blur-device-sim: simulated devices running the real Blur SDK.
//
//   blur-device-sim randomize --mechanism grr --epsilon 1 --domain 16 --input 3 --count 100000
//   blur-device-sim fleet --mechanism rr --epsilon 1 --devices 20000 --true-rate 0.3 --offline
//   blur-device-sim fleet --collector http://127.0.0.1:8080 --metric 1 ... [--table]
#include <httplib.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "estimate/metric_estimate.h"
#include "estimate/numeric_summary.h"
#include "ingest/batch_decoder.h"
#include "ingest/batch_validator.h"
#include "simulated_device.h"

namespace {

using blur::collector::MetricConfig;

struct Options {
  std::string mechanism = "rr";
  std::string epsilon = "1";
  uint32_t domain = 2;
  uint64_t seed = 1;
  // randomize
  uint32_t input = 0;
  uint64_t count = 100000;
  // fleet
  std::string collector = "http://127.0.0.1:8080";
  bool offline = false;
  uint32_t metric = 1;
  uint64_t devices = 20000;
  double true_rate = 0.3;
  std::string values_file;
  int threads = 4;
  double budget_nats = 10;
  bool table = false;
  std::string postprocess = "none";
  std::string ca_file;  // https:// collectors: the CA to verify them with
};

int fail(const std::string& message) {
  std::fprintf(stderr, "blur-device-sim: %s\n", message.c_str());
  return 2;
}

// The metric the simulated devices report under, validated like the
// collector's --metric flag.
std::optional<MetricConfig> metric_of(const Options& o, std::string* error) {
  auto metric = blur::collector::parse_metric_spec(std::to_string(o.metric) + ":" + o.mechanism +
                                                   ":" + o.epsilon + ":" + std::to_string(o.domain));
  if (!metric) {
    *error = metric.error().message;
    return std::nullopt;
  }
  return metric.value();
}

int randomize(const Options& o) {
  std::string error;
  const auto metric = metric_of(o, &error);
  if (!metric) return fail(error);
  if (o.input >= metric->domain_size) return fail("--input must be in [0, --domain)");
  const auto mechanism = blur::sim::device_mechanism(*metric);
  if (!mechanism.ok()) return fail(blur::status_name(mechanism.status()));
  blur::sim::SimPort port(o.seed);
  blur::Rng rng;
  static const uint8_t kName[] = "blur-device-sim/randomize";
  if (rng.seed(port.port(), kName, sizeof kName - 1) != blur::Status::kOk) {
    return fail("cannot seed the DRBG");
  }
  // Counted by the collector's own aggregation, from the decoder's form.
  blur::collector::Aggregate aggregate(*metric);
  static blur::ReportPayload payload;
  for (uint64_t i = 0; i < o.count; ++i) {
    const blur::Status status = blur::sim::randomize(mechanism.value(), rng, o.input, &payload);
    if (status != blur::Status::kOk) return fail(blur::status_name(status));
    aggregate.add(blur::sim::as_incoming(payload, *metric));
  }
  const blur::EpsilonMicros charged = blur::sim::epsilon_charged(mechanism.value());
  nlohmann::json out{{"mechanism", o.mechanism},
                     {"epsilon_charged", charged / 1e6},
                     {"epsilon_charged_micros", charged},
                     {"domain", metric->domain_size},
                     {"input", o.input},
                     {"count", o.count}};
  if (!aggregate.numeric()) {
    out["support"] = aggregate.support_counts();
  } else {
    nlohmann::json histogram = nlohmann::json::object();
    for (const auto& [value, count] : aggregate.summary().histogram()) {
      histogram[std::to_string(value)] = count;
    }
    out["histogram"] = histogram;
    out["grid_step"] = 1;
  }
  std::cout << out.dump() << "\n";
  return 0;
}

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

// POSTs a batch; retries transport failures and 5xx (the device keeps its
// report until acknowledged), fails at once on 4xx (the batch is wrong).
bool send(httplib::Client& client, const std::string& batch, std::string* error) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    auto response = client.Post("/v1/reports", batch, "application/x-protobuf");
    if (response && response->status == 200) return true;
    if (response && response->status >= 400 && response->status < 500) {
      *error =
          "collector refused a batch (" + std::to_string(response->status) + "): " + response->body;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50 << attempt));
  }
  *error = "collector unreachable at the configured URL after 8 attempts";
  return false;
}

void print_table(const Options& o, const nlohmann::json& estimate,
                 const std::vector<uint64_t>& true_counts) {
  const double n = static_cast<double>(estimate["n"].get<uint64_t>());
  std::vector<uint32_t> order(true_counts.size());
  for (uint32_t v = 0; v < order.size(); ++v) order[v] = v;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return true_counts[a] > true_counts[b]; });
  if (order.size() > 20) order.resize(20);
  std::printf("\n  Blur demo: %.0f devices, %s, epsilon = %s per report\n", n, o.mechanism.c_str(),
              o.epsilon.c_str());
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

int fleet(const Options& o) {
  std::string error;
  const auto metric = metric_of(o, &error);
  if (!metric) return fail(error);
  const auto mechanism = blur::sim::device_mechanism(*metric);
  if (!mechanism.ok()) return fail(blur::status_name(mechanism.status()));
  std::vector<uint32_t> truth;
  if (!load_truth(o, metric->domain_size, &truth, &error)) return fail(error);
  const bool numeric = blur::collector::is_numeric(metric->mechanism);
  std::vector<uint64_t> true_counts(numeric ? 0 : metric->domain_size, 0);
  double true_sum = 0;
  for (uint32_t v : truth) {
    if (!numeric) ++true_counts[v];
    true_sum += v;
  }
  const double true_mean = truth.empty() ? 0.0 : true_sum / static_cast<double>(truth.size());
  const uint64_t devices = truth.size();
  const auto budget = static_cast<uint64_t>(o.budget_nats * blur::kEpsilonMicrosPerNat);

  // One device's life, up to its encoded batch.
  auto device_batch = [&](uint64_t i, std::string* batch, std::string* message) {
    blur::sim::SimulatedDevice device(blur::sim::device_seed(o.seed, i));
    blur::Status status = device.boot("blur-device-sim/" + std::to_string(i), budget);
    if (status == blur::Status::kOk) {
      status = device.report_batch(mechanism.value(), o.metric, truth[i], batch);
    }
    if (status != blur::Status::kOk) {
      *message = "device " + std::to_string(i) + ": " + blur::status_name(status);
      return false;
    }
    return true;
  };

  if (o.offline) {
    // The collector's own path, in process: decode, validate, count, estimate.
    blur::collector::Aggregate aggregate(*metric);
    std::string batch;
    for (uint64_t i = 0; i < devices; ++i) {
      blur::collector::Batch decoded;
      if (!device_batch(i, &batch, &error)) return fail(error);
      if (!blur::collector::decode_batch(reinterpret_cast<const uint8_t*>(batch.data()),
                                         batch.size(), &decoded, &error)) {
        return fail(error);
      }
      error =
          blur::collector::validate_batch(decoded, [&](uint32_t id) -> std::optional<MetricConfig> {
            return id == metric->id ? std::optional<MetricConfig>(*metric) : std::nullopt;
          });
      if (!error.empty()) return fail(error);
      for (const auto& r : decoded.reports) aggregate.add(r);
    }
    nlohmann::json out =
        blur::collector::estimate_json(aggregate, *blur::collector::post_processing_from_name(o.postprocess));
    if (numeric) {
      out["true_mean"] = true_mean;
    } else {
      out["true_counts"] = true_counts;
    }
    if (o.table && !numeric) {
      print_table(o, out, true_counts);
    } else {
      std::cout << out.dump() << "\n";
    }
    return 0;
  }

  std::atomic<uint64_t> next{0}, done{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  const auto start = std::chrono::steady_clock::now();
  std::fprintf(stderr, "blur-device-sim: %llu devices -> %s (%d connections)\n",
               static_cast<unsigned long long>(devices), o.collector.c_str(), o.threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < o.threads; ++t) {
    workers.emplace_back([&] {
      httplib::Client client(o.collector);
      if (!o.ca_file.empty()) client.set_ca_cert_path(o.ca_file.c_str());
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      client.set_connection_timeout(5);
      std::string batch, message;
      for (uint64_t i = next++; i < devices && !failed; i = next++) {
        if (!device_batch(i, &batch, &message) || !send(client, batch, &message)) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!failed.exchange(true)) error = message;
          return;
        }
        const uint64_t finished = ++done;
        if (finished % std::max<uint64_t>(devices / 10, 1) == 0) {
          std::fprintf(stderr, "  %3llu%%  %llu devices reported\n",
                       static_cast<unsigned long long>(finished * 100 / devices),
                       static_cast<unsigned long long>(finished));
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  if (failed) return fail(error) - 1;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "blur-device-sim: %llu reports acknowledged in %.2f s (%.0f devices/s)\n",
               static_cast<unsigned long long>(devices), seconds,
               static_cast<double>(devices) / seconds);
  if (!o.table || numeric) {
    nlohmann::json out{{"devices", devices}};
    if (numeric) {
      out["true_mean"] = true_mean;
    } else {
      out["true_counts"] = true_counts;
    }
    std::cout << out.dump() << "\n";
    return 0;
  }
  httplib::Client client(o.collector);
  if (!o.ca_file.empty()) client.set_ca_cert_path(o.ca_file.c_str());
  auto response = client.Get("/v1/metrics/" + std::to_string(o.metric) +
                             "/estimate?postprocess=" + o.postprocess);
  if (!response || response->status != 200) return fail("cannot fetch the estimate") - 1;
  print_table(o, nlohmann::json::parse(response->body), true_counts);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"blur-device-sim: simulated devices running the real Blur SDK"};
  app.require_subcommand(1);
  Options o;
  auto common = [&o](CLI::App* cmd) {
    cmd->add_option("--mechanism", o.mechanism,
                    "rr | grr | sue | oue | hr | olh | blh | laplace | onebit")
        ->capture_default_str();
    cmd->add_option("--epsilon", o.epsilon, "Epsilon per report, in nats")->capture_default_str();
    cmd->add_option("--domain", o.domain, "Number of possible values (rr: 2)")
        ->capture_default_str();
    cmd->add_option("--seed", o.seed, "Seed of the simulated entropy (and generated values)")
        ->capture_default_str();
  };
  auto* randomize_cmd = app.add_subcommand("randomize",
                                           "Run one device's randomizer N times on one input; "
                                           "print the support counts as JSON");
  common(randomize_cmd);
  randomize_cmd->add_option("--input", o.input, "The true value")->capture_default_str();
  randomize_cmd->add_option("--count", o.count, "How many reports")->capture_default_str();

  auto* fleet_cmd = app.add_subcommand("fleet", "Simulate a fleet, one report per device");
  common(fleet_cmd);
  fleet_cmd->add_flag("--offline", o.offline,
                      "Estimate in process (decode, validate, estimate) and print JSON");
  fleet_cmd->add_option("--collector", o.collector, "Collector base URL (http:// or https://)")
      ->capture_default_str();
  fleet_cmd
      ->add_option("--ca", o.ca_file, "PEM CA that signed an https:// collector's certificate")
      ->check(CLI::ExistingFile);
  fleet_cmd->add_option("--metric", o.metric, "Metric id (registered on the collector)")
      ->capture_default_str();
  fleet_cmd->add_option("--devices", o.devices, "Number of generated devices")
      ->check(CLI::Range(uint64_t{1}, uint64_t{100000000}))
      ->capture_default_str();
  fleet_cmd->add_option("--true-rate", o.true_rate, "rr: share of generated devices holding 1")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  fleet_cmd->add_option("--values", o.values_file, "True values, one integer per line and device")
      ->check(CLI::ExistingFile);
  fleet_cmd->add_option("--threads", o.threads, "Concurrent connections")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  fleet_cmd->add_option("--budget", o.budget_nats, "Each device's lifetime epsilon budget (nats)")
      ->capture_default_str();
  fleet_cmd->add_flag("--table", o.table, "Print the estimate next to the truth as a table");
  fleet_cmd
      ->add_option("--postprocess", o.postprocess,
                   "Also report Norm-Sub estimates (non-negative, summing to n): none or norm-sub")
      ->check(CLI::IsMember({"none", "norm-sub"}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  return randomize_cmd->parsed() ? randomize(o) : fleet(o);
}
