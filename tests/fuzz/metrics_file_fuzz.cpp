// libFuzzer: the metrics configuration file (config/metrics_file.h), TOML
// parsed by toml++ with exceptions on, so the loader's try/catch is all that
// stands between a bad file and a crash at start. Any text: no exception
// escapes, a refusal names the file; a loaded list is non-empty with unique
// ids, every metric passes check_metric and survives the store's canonical
// JSON, and the list written back as TOML (every key explicit) loads to the
// same metrics.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "config/metric_rules.h"
#include "config/metrics_file.h"
#include "mechanisms/mechanism_spec.h"

namespace {

using namespace blur::collector;

// Micro-nats as the decimal text the file takes ("1.250000").
std::string nats(uint64_t micros) {
  char text[40];
  std::snprintf(text, sizeof text, "\"%llu.%06llu\"",
                static_cast<unsigned long long>(micros / 1000000),
                static_cast<unsigned long long>(micros % 1000000));
  return text;
}

// A finite double as a TOML float that reads back as the same double.
std::string toml_float(double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", value);
  std::string out = text;
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

std::string to_toml(const std::vector<MetricConfig>& metrics) {
  std::string out;
  for (const MetricConfig& m : metrics) {
    out += "[[metric]]\nid = " + std::to_string(m.id) + "\nmechanism = \"" +
           blur::mechanism_name(m.mechanism) + "\"\nepsilon = " + nats(m.epsilon_micros) +
           "\ndomain = " + std::to_string(m.domain_size) +
           "\nbucket = " + std::to_string(m.bucket_seconds) +
           "\nretention_days = " + std::to_string(m.retention_days) + "\n";
    if (m.max_reports_per_bucket != 0) {
      out += "max_reports_per_bucket = " + std::to_string(m.max_reports_per_bucket) + "\n";
    }
    if (m.max_reports_per_day != 0) {
      out += "max_reports_per_day = " + std::to_string(m.max_reports_per_day) + "\n";
    }
    if (m.longitudinal_epsilon_micros != 0) {
      out += "longitudinal_epsilon = " + nats(m.longitudinal_epsilon_micros) + "\n";
    }
    if (m.epsilon_allowance_per_bucket_micros != 0) {
      out += "epsilon_allowance_per_bucket = " + nats(m.epsilon_allowance_per_bucket_micros) + "\n";
    }
    if (m.quarantine_seconds != 0) {
      out += "quarantine = \"" + std::to_string(m.quarantine_seconds) + "s\"\n";
    }
    if (m.mechanism == MechanismId::kRappor) {
      out += "bloom_bits = " + std::to_string(m.rappor.bloom_bits) +
             "\nhash_count = " + std::to_string(m.rappor.hash_count) +
             "\ncohort_count = " + std::to_string(m.rappor.cohort_count) +
             "\nhash_key = " + std::to_string(m.hash_key) + "\n";
    }
    if (is_numeric(m.mechanism)) {
      out += "range = [" + toml_float(m.range_low) + ", " + toml_float(m.range_high) + "]\n";
    }
  }
  return out;
}

Outcome<std::vector<MetricConfig>> load(const std::string& text) {
  try {
    return parse_metrics_toml(text, "fuzz.toml");
  } catch (...) {
    __builtin_trap();  // the loader answers with an error, never throws
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto metrics = load(text);
  if (!metrics) {
    if (metrics.error().kind != Error::Kind::kInvalid) __builtin_trap();
    if (metrics.error().message.rfind("fuzz.toml", 0) != 0) __builtin_trap();
    return 0;
  }
  if (metrics->empty()) __builtin_trap();
  std::set<uint32_t> ids;
  for (const MetricConfig& m : *metrics) {
    if (!ids.insert(m.id).second) __builtin_trap();
    if (!check_metric(m).empty()) __builtin_trap();
    const auto stored = config_from_text(config_to_text(m));
    if (!stored || stored.value() != m) __builtin_trap();
  }
  const auto again = load(to_toml(*metrics));
  if (!again || again.value() != metrics.value()) __builtin_trap();
  return 0;
}
