// blur-device-sim's command-line options and the helpers every command uses.
#ifndef BLUR_TOOLS_DEVICE_SIM_OPTIONS_H
#define BLUR_TOOLS_DEVICE_SIM_OPTIONS_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/metric_rules.h"

namespace blur::sim {

struct Options {
  std::string mechanism = "rr";
  std::string epsilon = "1";
  uint32_t domain = 2;
  std::string longitudinal;  // memoized metrics: the permanent response's epsilon (empty: none)
  uint64_t seed = 0;
  bool seed_given = false;  // false: a fresh seed from the OS (resolve_seed)
  // randomize
  uint32_t input = 0;
  uint64_t count = 100000;
  // fleet and load
  std::string collector = "http://127.0.0.1:8080";
  uint32_t metric = 1;
  // fleet
  bool offline = false;
  uint64_t devices = 20000;
  uint32_t reports = 1;  // per device
  double true_rate = 0.3;
  uint32_t spread_hours = 0;  // 0: every device's clock at the sim's default
  std::string values_file;
  int threads = 4;
  int retries = 10;  // per batch, after the first attempt (network failures and 5xx)
  double budget_nats = 10;
  bool table = false;
  std::string postprocess = "none";
  std::string ca_file;  // https:// collectors: the CA to verify them with
  // Credentials (enrollment.h): the files named, or the environment.
  std::string enrollment_secret_file, reader_token_file;
  std::string enrollment_secret, reader_token;
  // discover
  uint32_t top_k = 10;
  uint32_t max_length = 0;  // 0: the longest word in --values
  uint32_t beam = 0;        // 0: the decoder's default
  // load
  double duration = 10;
  uint32_t batch = 64;          // reports per request
  uint32_t load_metrics = 16;   // metrics per request (at most batch), ids metric..metric+N-1
  double rate = 0;              // requests per second (0: as fast as answers come)
  std::string start_file;       // after enrolling, wait for this file before sending
  int connections = 16;
  uint64_t load_devices = 100000;  // with authentication: nonces enrolled before sending
  bool json = false;
  std::string save_batch;  // write one pool batch (for wrk) instead of sending
};

// Prints "blur-device-sim: message" to stderr; returns 2 (usage/set-up error).
int fail(const std::string& message);

// The metric the simulated devices report under, validated like the
// collector's --metric flag.
std::optional<collector::MetricConfig> metric_of(const Options& o, std::string* error);

// --seed, or else a fresh seed from getrandom(2), so two runs never share
// device nonces by accident. Prints it to stderr (repeat a run with --seed).
bool resolve_seed(Options* o, std::string* error);

// Word-discovery values: one word per line and device, each 1..16
// characters of [a-z']; a line that is not a word is an error naming it
// (the devices would refuse it: nothing is recorded).
bool load_words(const std::string& path, std::vector<std::string>* words, std::string* error);

}  // namespace blur::sim

#endif  // BLUR_TOOLS_DEVICE_SIM_OPTIONS_H
