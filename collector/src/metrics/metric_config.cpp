#include "metrics/metric_config.h"

#include <cctype>
#include <cstdio>

namespace blur::collector {

namespace {
constexpr uint64_t kMicrosPerNat = 1000000;
constexpr uint64_t kMaxEpsilonMicros = 20 * kMicrosPerNat;  // SDK's kMaxReportEpsilonMicros
}  // namespace

std::optional<Mechanism> mechanism_from_name(const std::string& name) {
  if (name == "rr") return Mechanism::kBinaryRandomizedResponse;
  return std::nullopt;
}

const char* mechanism_name(Mechanism mechanism) {
  switch (mechanism) {
    case Mechanism::kBinaryRandomizedResponse:
      return "rr";
  }
  return "unknown";
}

uint32_t mechanism_domain_size(Mechanism mechanism) {
  switch (mechanism) {
    case Mechanism::kBinaryRandomizedResponse:
      return 2;
  }
  return 0;
}

bool operator==(const MetricConfig& a, const MetricConfig& b) {
  return a.id == b.id && a.mechanism == b.mechanism && a.epsilon_micros == b.epsilon_micros;
}

std::optional<uint32_t> parse_epsilon_micros(const std::string& text) {
  uint64_t whole = 0;
  uint64_t fraction = 0;
  size_t i = 0;
  size_t whole_digits = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]));
       ++i, ++whole_digits) {
    whole = whole * 10 + static_cast<uint64_t>(text[i] - '0');
    if (whole > kMaxEpsilonMicros) return std::nullopt;
  }
  size_t fraction_digits = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
      if (fraction_digits < 6) fraction = fraction * 10 + static_cast<uint64_t>(text[i] - '0');
      ++fraction_digits;
    }
  }
  if (i != text.size() || whole_digits + fraction_digits == 0) return std::nullopt;
  for (size_t d = fraction_digits; d < 6; ++d) fraction *= 10;
  const uint64_t micros = whole * kMicrosPerNat + fraction;
  if (micros == 0 || micros > kMaxEpsilonMicros) return std::nullopt;
  return static_cast<uint32_t>(micros);
}

std::optional<MetricConfig> parse_metric_spec(const std::string& spec, std::string* error) {
  const size_t first = spec.find(':');
  const size_t second = first == std::string::npos ? first : spec.find(':', first + 1);
  if (second == std::string::npos) {
    *error = "metric '" + spec + "': expected ID:MECHANISM:EPSILON, e.g. 1:rr:1.0";
    return std::nullopt;
  }
  const std::string id_text = spec.substr(0, first);
  const std::string mechanism_text = spec.substr(first + 1, second - first - 1);
  const std::string epsilon_text = spec.substr(second + 1);
  MetricConfig metric;
  if (id_text.empty() || id_text.size() > 10 ||
      id_text.find_first_not_of("0123456789") != std::string::npos ||
      std::stoull(id_text) > UINT32_MAX) {
    *error = "metric '" + spec + "': id must be an integer in 0..4294967295";
    return std::nullopt;
  }
  metric.id = static_cast<uint32_t>(std::stoull(id_text));
  const auto mechanism = mechanism_from_name(mechanism_text);
  if (!mechanism) {
    *error = "metric '" + spec + "': unknown mechanism '" + mechanism_text + "' (known: rr)";
    return std::nullopt;
  }
  metric.mechanism = *mechanism;
  const auto epsilon = parse_epsilon_micros(epsilon_text);
  if (!epsilon) {
    *error = "metric '" + spec + "': epsilon must be a decimal number in (0, 20]";
    return std::nullopt;
  }
  metric.epsilon_micros = *epsilon;
  return metric;
}

std::string describe(const MetricConfig& metric) {
  char text[96];
  std::snprintf(text, sizeof text, "metric %u (%s, epsilon %u.%06u)", metric.id,
                mechanism_name(metric.mechanism), metric.epsilon_micros / 1000000,
                metric.epsilon_micros % 1000000);
  return text;
}

}  // namespace blur::collector
