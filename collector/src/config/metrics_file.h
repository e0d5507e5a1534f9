// Metrics from a configuration file (TOML, parsed with toml++ from Debian:
// header-only, TOML's tables map one-to-one onto a metric, and unlike YAML
// there is no implicit typing to turn "no" or 1.10 into something else):
//
//   [[metric]]
//   id = 1
//   mechanism = "rr"          # see mechanism_table.h for the names
//   epsilon = "1.0"           # nats per report: decimal text (truncated to
//                             # micro-nats, as the SDK does) or a number
//   domain = 2                # values 0..domain-1 (rr: 2, may be omitted)
//   bucket = "1h"             # "1m" "5m" "15m" "30m" "1h" "1d" or seconds; default 1h
//   retention_days = 30       # raw reports; aggregates are kept
//   # rappor only:  bloom_bits = 256, hash_count = 1, cohort_count = 64, hash_key = 0
//   # laplace, onebit only:  range = [0.0, 120.0]  (what grid 0..domain-1 measures)
//
// Unknown keys are errors (a typo must not silently fall back to a default).
// The server file (server_file.h) takes the same tables as a section, or
// names such a file (metrics_file = "...").
#ifndef BLUR_COLLECTOR_CONFIG_METRICS_FILE_H
#define BLUR_COLLECTOR_CONFIG_METRICS_FILE_H

#include <string>
#include <vector>

#include "config/metric_rules.h"
#include "util/outcome.h"

namespace blur::collector {

Outcome<std::vector<MetricConfig>> load_metrics_file(const std::string& path);
// The same from TOML text; `name` labels messages.
Outcome<std::vector<MetricConfig>> parse_metrics_toml(const std::string& text,
                                                      const std::string& name);
// The metrics as such a file, every key explicit, that loads back to the
// same metrics (config check --print, the fuzzers' round trips).
std::string metrics_toml(const std::vector<MetricConfig>& metrics);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_CONFIG_METRICS_FILE_H
