// A metric as the collector knows it: the id devices report under, the
// mechanism and epsilon its reports must carry. Reports are validated
// against this before anything is stored.
#ifndef BLUR_COLLECTOR_METRICS_METRIC_CONFIG_H
#define BLUR_COLLECTOR_METRICS_METRIC_CONFIG_H

#include <cstdint>
#include <optional>
#include <string>

namespace blur::collector {

enum class Mechanism : uint32_t {
  kBinaryRandomizedResponse = 1,  // == blur.Mechanism.MECHANISM_BINARY_RR
};

// "rr" <-> kBinaryRandomizedResponse.
std::optional<Mechanism> mechanism_from_name(const std::string& name);
const char* mechanism_name(Mechanism mechanism);
// The number of true values a mechanism's metric has (2 for "rr").
uint32_t mechanism_domain_size(Mechanism mechanism);

struct MetricConfig {
  uint32_t id = 0;
  Mechanism mechanism = Mechanism::kBinaryRandomizedResponse;
  uint32_t epsilon_micros = 0;
};

bool operator==(const MetricConfig& a, const MetricConfig& b);

// Parses a decimal epsilon ("1", "0.25", "1.5e0" is not accepted) into
// micro-nats, truncating digits past the sixth decimal, as the SDK does.
// Returns nothing for malformed, zero or over-20-nat values.
std::optional<uint32_t> parse_epsilon_micros(const std::string& text);

// Parses "ID:MECHANISM:EPSILON", e.g. "1:rr:1.0". On failure returns
// nothing and sets *error to a message naming the problem.
std::optional<MetricConfig> parse_metric_spec(const std::string& spec, std::string* error);

std::string describe(const MetricConfig& metric);  // "metric 1 (rr, epsilon 1.000000)"

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_METRICS_METRIC_CONFIG_H
