// blur-device-sim: a fleet of simulated devices, each a real SDK instance
// (its own seeded entropy port, RAM flash, CTR_DRBG, persisted ledger),
// sending its randomized reports to a collector over HTTP.
//
//   blur-device-sim fleet --collector http://127.0.0.1:8080 --devices 20000
//       --true-rate 0.3 --epsilon 1 --metric 1 [--values FILE] [--table]
#include <httplib.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "blur/binary_randomized_response.h"
#include "blur/ledger.h"
#include "blur/report.h"
#include "blur/report_encoding.h"
#include "blur/rng.h"
#include "metrics/metric_config.h"
#include "sim_port.h"

namespace {

struct FleetOptions {
  std::string collector = "http://127.0.0.1:8080";
  uint64_t devices = 20000;
  double true_rate = 0.3;
  std::string values_file;
  std::string epsilon = "1";
  uint32_t metric = 1;
  uint64_t seed = 1;
  int threads = 4;
  double budget_nats = 10;
  bool table = false;
};

// Device i's entropy seed: distinct, reproducible streams per device.
uint64_t device_seed(uint64_t fleet_seed, uint64_t index) {
  uint64_t z = fleet_seed * 0x9E3779B97F4A7C15ull + index + 1;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

bool load_truth(const FleetOptions& options, std::vector<uint8_t>* truth, std::string* error) {
  if (!options.values_file.empty()) {
    std::ifstream in(options.values_file);
    if (!in) {
      *error = "cannot read " + options.values_file;
      return false;
    }
    std::string line;
    for (size_t number = 1; std::getline(in, line); ++number) {
      if (line == "0" || line == "1") {
        truth->push_back(line == "1");
      } else if (!line.empty()) {
        *error = options.values_file + ":" + std::to_string(number) + ": expected 0 or 1";
        return false;
      }
    }
    return true;
  }
  std::mt19937_64 generator(options.seed);
  std::bernoulli_distribution value(options.true_rate);
  truth->resize(options.devices);
  for (auto& v : *truth) v = value(generator);
  return true;
}

// One device's life: boot, provision, report, encode. Returns the batch.
bool run_device(uint64_t index, bool value, blur::EpsilonMicros epsilon,
                const FleetOptions& options, std::string* batch, std::string* error) {
  blur::sim::SimPort port(device_seed(options.seed, index));
  blur::Rng rng;
  const std::string personalization = "blur-device-sim/" + std::to_string(index);
  blur::Status status =
      rng.seed(port.port(), reinterpret_cast<const uint8_t*>(personalization.data()),
               personalization.size());
  blur::Ledger ledger;
  uint64_t nonce = 0;
  if (status == blur::Status::kOk) status = rng.next_u64(&nonce);
  if (status == blur::Status::kOk) {
    status = ledger.provision(
        port.port(), {static_cast<uint64_t>(options.budget_nats * blur::kEpsilonMicrosPerNat)},
        nonce);
  }
  const auto rr = blur::BinaryRandomizedResponse::create(epsilon);
  if (status == blur::Status::kOk && !rr.ok()) status = rr.status();
  blur::Report report{};
  if (status == blur::Status::kOk) {
    status = blur::make_report(ledger, rng, rr.value(), options.metric, value, &report);
  }
  uint8_t buffer[blur::kBatchHeaderSize + blur::kMaxEncodedScalarReportSize];
  size_t written = 0;
  if (status == blur::Status::kOk) {
    status = blur::encode_batch(ledger.device_nonce(), &report, 1, buffer, sizeof buffer, &written);
  }
  if (status != blur::Status::kOk) {
    *error = "device " + std::to_string(index) + ": " + blur::status_name(status);
    return false;
  }
  batch->assign(reinterpret_cast<const char*>(buffer), written);
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

void print_table(const FleetOptions& options, const nlohmann::json& estimate, uint64_t ones,
                 uint64_t devices) {
  const auto& e = estimate["estimates"][1];
  const double truth = static_cast<double>(ones) / static_cast<double>(devices);
  const double low = e["fraction_ci95"][0];
  const double high = e["fraction_ci95"][1];
  const bool inside = low <= truth && truth <= high;
  std::printf("\n");
  std::printf("  Blur demo: %llu devices, binary randomized response, epsilon = %s\n",
              static_cast<unsigned long long>(devices), options.epsilon.c_str());
  std::printf("  +---------------------------------+-------------------+\n");
  std::printf("  | share of devices with value 1   |                   |\n");
  std::printf("  +---------------------------------+-------------------+\n");
  std::printf("  | truth (what the devices held)   | %17.4f |\n", truth);
  std::printf("  | estimate (debiased, collector)  | %17.4f |\n", e["fraction"].get<double>());
  std::printf("  | standard error                  | %17.4f |\n",
              e["stderr"].get<double>() / static_cast<double>(devices));
  std::printf("  | 95%% confidence interval         | [%6.4f, %6.4f] |\n", low, high);
  std::printf("  | truth inside the interval       | %17s |\n", inside ? "yes" : "NO");
  std::printf("  | reports stored (n)              | %17llu |\n",
              static_cast<unsigned long long>(estimate["n"].get<uint64_t>()));
  std::printf("  +---------------------------------+-------------------+\n");
  std::printf("  Each device kept its true bit with probability e^eps/(1+e^eps) = %.4f;\n",
              1.0 / (1.0 + std::exp(-std::stod(options.epsilon))));
  std::printf("  the collector saw only randomized bits.\n");
}

int fleet(const FleetOptions& options) {
  // The collector's parser: decimal, truncated to micro-nats.
  const auto epsilon = blur::collector::parse_epsilon_micros(options.epsilon);
  if (!epsilon) {
    std::fprintf(stderr, "blur-device-sim: --epsilon must be in (0, 20]\n");
    return 2;
  }
  std::vector<uint8_t> truth;
  std::string error;
  if (!load_truth(options, &truth, &error)) {
    std::fprintf(stderr, "blur-device-sim: %s\n", error.c_str());
    return 2;
  }
  const uint64_t devices = truth.size();
  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> done{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  const auto start = std::chrono::steady_clock::now();
  std::fprintf(stderr, "blur-device-sim: %llu devices -> %s (%d connections)\n",
               static_cast<unsigned long long>(devices), options.collector.c_str(),
               options.threads);

  std::vector<std::thread> workers;
  for (int t = 0; t < options.threads; ++t) {
    workers.emplace_back([&] {
      httplib::Client client(options.collector);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      client.set_connection_timeout(5);
      std::string batch, message;
      for (uint64_t i = next++; i < devices && !failed; i = next++) {
        if (!run_device(i, truth[i] != 0, *epsilon, options, &batch, &message) ||
            !send(client, batch, &message)) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!failed.exchange(true)) error = message;
          return;
        }
        const uint64_t finished = ++done;
        if (finished % (devices / 10 == 0 ? 1 : devices / 10) == 0) {
          std::fprintf(stderr, "  %3llu%%  %llu devices reported\n",
                       static_cast<unsigned long long>(finished * 100 / devices),
                       static_cast<unsigned long long>(finished));
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  if (failed) {
    std::fprintf(stderr, "blur-device-sim: %s\n", error.c_str());
    return 1;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  uint64_t ones = 0;
  for (uint8_t v : truth) ones += v;
  std::fprintf(stderr, "blur-device-sim: %llu reports acknowledged in %.2f s (%.0f devices/s)\n",
               static_cast<unsigned long long>(devices), seconds,
               static_cast<double>(devices) / seconds);

  if (options.table) {
    httplib::Client client(options.collector);
    auto response = client.Get("/v1/metrics/" + std::to_string(options.metric) + "/estimate");
    if (!response || response->status != 200) {
      std::fprintf(stderr, "blur-device-sim: cannot fetch the estimate\n");
      return 1;
    }
    print_table(options, nlohmann::json::parse(response->body), ones, devices);
  } else {
    std::printf("{\"devices\": %llu, \"true_ones\": %llu}\n",
                static_cast<unsigned long long>(devices), static_cast<unsigned long long>(ones));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"blur-device-sim: simulated devices running the real Blur SDK"};
  app.require_subcommand(1);
  FleetOptions o;
  auto* fleet_cmd = app.add_subcommand("fleet", "Simulate a fleet reporting to a collector");
  fleet_cmd->add_option("--collector", o.collector, "Collector base URL")->capture_default_str();
  fleet_cmd->add_option("--devices", o.devices, "Number of devices (with --true-rate)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{100000000}))
      ->capture_default_str();
  fleet_cmd->add_option("--true-rate", o.true_rate, "Share of devices whose true value is 1")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  fleet_cmd
      ->add_option("--values", o.values_file,
                   "File of true values, one 0/1 per line (one device each)")
      ->check(CLI::ExistingFile);
  fleet_cmd->add_option("--epsilon", o.epsilon, "Epsilon per report, in nats")
      ->capture_default_str();
  fleet_cmd->add_option("--metric", o.metric, "Metric id (registered on the collector)")
      ->capture_default_str();
  fleet_cmd->add_option("--seed", o.seed, "Seed of the simulated entropy and true values")
      ->capture_default_str();
  fleet_cmd->add_option("--threads", o.threads, "Concurrent connections")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  fleet_cmd->add_option("--budget", o.budget_nats, "Each device's lifetime epsilon budget (nats)")
      ->capture_default_str();
  fleet_cmd->add_flag("--table", o.table, "Fetch the estimate and print it next to the truth");
  CLI11_PARSE(app, argc, argv);
  return fleet(o);
}
