#include "metrics/metric_config.h"

#include <cctype>
#include <cstdio>
#include <vector>

#include "blur/hadamard_response.h"

namespace blur::collector {

namespace {
constexpr uint64_t kMicrosPerNat = 1000000;
constexpr uint64_t kMaxEpsilonMicros = 20 * kMicrosPerNat;  // SDK's kMaxReportEpsilonMicros
constexpr uint32_t kMaxDomainSize = 1u << 16;               // SDK's GRR limit
constexpr uint32_t kMaxBitVectorDomain = 4096;              // SDK's unary-encoding limit
constexpr uint32_t kMaxGridDomain = 1u << 24;               // SDK's discrete-Laplace limit
}  // namespace

std::optional<Mechanism> mechanism_from_name(const std::string& name) {
  if (name == "rr") return Mechanism::kBinaryRandomizedResponse;
  if (name == "grr") return Mechanism::kGeneralizedRandomizedResponse;
  if (name == "sue") return Mechanism::kSymmetricUnaryEncoding;
  if (name == "oue") return Mechanism::kOptimizedUnaryEncoding;
  if (name == "laplace") return Mechanism::kDiscreteLaplace;
  if (name == "onebit") return Mechanism::kOneBitMean;
  if (name == "hr") return Mechanism::kHadamardResponse;
  if (name == "olh") return Mechanism::kOptimizedLocalHashing;
  if (name == "blh") return Mechanism::kBinaryLocalHashing;
  if (name == "rappor") return Mechanism::kRappor;
  return std::nullopt;
}

uint32_t report_value_limit(const MetricConfig& metric) {
  return metric.mechanism == Mechanism::kHadamardResponse ? blur::hadamard_size(metric.domain_size)
                                                          : metric.domain_size;
}

blur::LocalHashShape local_hash_shape(const MetricConfig& metric) {
  return blur::LocalHashing::shape(metric.mechanism == Mechanism::kBinaryLocalHashing
                                       ? blur::LocalHashing::Kind::kBinary
                                       : blur::LocalHashing::Kind::kOptimized,
                                   metric.epsilon_micros, metric.domain_size);
}

bool is_numeric(Mechanism mechanism) {
  return mechanism == Mechanism::kDiscreteLaplace || mechanism == Mechanism::kOneBitMean;
}

PayloadShape payload_shape(Mechanism mechanism) {
  switch (mechanism) {
    case Mechanism::kBinaryRandomizedResponse:
    case Mechanism::kOneBitMean:
      return PayloadShape::kBit;
    case Mechanism::kGeneralizedRandomizedResponse:
    case Mechanism::kHadamardResponse:
      return PayloadShape::kIndex;
    case Mechanism::kSymmetricUnaryEncoding:
    case Mechanism::kOptimizedUnaryEncoding:
      return PayloadShape::kBits;
    case Mechanism::kDiscreteLaplace:
      return PayloadShape::kNumber;
    case Mechanism::kOptimizedLocalHashing:
    case Mechanism::kBinaryLocalHashing:
      return PayloadShape::kLocalHash;
    case Mechanism::kRappor:
      return PayloadShape::kBloom;
  }
  return PayloadShape::kIndex;
}

const char* mechanism_name(Mechanism mechanism) {
  switch (mechanism) {
    case Mechanism::kBinaryRandomizedResponse:
      return "rr";
    case Mechanism::kGeneralizedRandomizedResponse:
      return "grr";
    case Mechanism::kSymmetricUnaryEncoding:
      return "sue";
    case Mechanism::kOptimizedUnaryEncoding:
      return "oue";
    case Mechanism::kDiscreteLaplace:
      return "laplace";
    case Mechanism::kOneBitMean:
      return "onebit";
    case Mechanism::kHadamardResponse:
      return "hr";
    case Mechanism::kOptimizedLocalHashing:
      return "olh";
    case Mechanism::kBinaryLocalHashing:
      return "blh";
    case Mechanism::kRappor:
      return "rappor";
  }
  return "unknown";
}

bool operator==(const MetricConfig& a, const MetricConfig& b) {
  return a.id == b.id && a.mechanism == b.mechanism && a.epsilon_micros == b.epsilon_micros &&
         a.domain_size == b.domain_size && a.rappor.bloom_bits == b.rappor.bloom_bits &&
         a.rappor.hash_count == b.rappor.hash_count &&
         a.rappor.cohort_count == b.rappor.cohort_count && a.hash_key == b.hash_key;
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

namespace {

std::optional<uint32_t> parse_uint32(const std::string& text) {
  if (text.empty() || text.size() > 10 ||
      text.find_first_not_of("0123456789") != std::string::npos || std::stoull(text) > UINT32_MAX) {
    return std::nullopt;
  }
  return static_cast<uint32_t>(std::stoull(text));
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at = text.find(separator); at != std::string::npos;
       at = text.find(separator, start)) {
    parts.push_back(text.substr(start, at - start));
    start = at + 1;
  }
  parts.push_back(text.substr(start));
  return parts;
}

}  // namespace

std::optional<MetricConfig> parse_metric_spec(const std::string& spec, std::string* error) {
  const std::vector<std::string> parts = split(spec, ':');
  if (parts.size() < 3 || parts.size() > 4) {
    *error = "metric '" + spec +
             "': expected ID:MECHANISM:EPSILON[:DOMAIN], e.g. 1:rr:1.0 or 2:grr:2:16";
    return std::nullopt;
  }
  const std::string& mechanism_text = parts[1];
  const std::string& epsilon_text = parts[2];
  MetricConfig metric;
  const auto id = parse_uint32(parts[0]);
  if (!id) {
    *error = "metric '" + spec + "': id must be an integer in 0..4294967295";
    return std::nullopt;
  }
  metric.id = *id;
  const auto mechanism = mechanism_from_name(mechanism_text);
  if (!mechanism) {
    *error = "metric '" + spec + "': unknown mechanism '" + mechanism_text +
             "' (known: rr, grr, sue, oue, hr, olh, blh, rappor, laplace, onebit)";
    return std::nullopt;
  }
  metric.mechanism = *mechanism;
  const auto epsilon = parse_epsilon_micros(epsilon_text);
  if (!epsilon) {
    *error = "metric '" + spec + "': epsilon must be a decimal number in (0, 20]";
    return std::nullopt;
  }
  metric.epsilon_micros = *epsilon;
  if (metric.mechanism == Mechanism::kBinaryRandomizedResponse) {
    if (parts.size() == 4 && parts[3] != "2") {
      *error = "metric '" + spec + "': rr has domain 2";
      return std::nullopt;
    }
    metric.domain_size = 2;
  } else {
    const PayloadShape shape = payload_shape(metric.mechanism);
    const uint32_t max_domain =
        shape == PayloadShape::kBits || shape == PayloadShape::kLocalHash ? kMaxBitVectorDomain
        : is_numeric(metric.mechanism)                                    ? kMaxGridDomain
        : metric.mechanism == Mechanism::kHadamardResponse                ? kMaxDomainSize - 1
                                                                          : kMaxDomainSize;
    const auto domain = parts.size() == 4 ? parse_uint32(parts[3]) : std::nullopt;
    if (!domain || *domain < 2 || *domain > max_domain) {
      *error = "metric '" + spec + "': " + mechanism_text + " needs a domain size in 2.." +
               std::to_string(max_domain);
      return std::nullopt;
    }
    metric.domain_size = *domain;
  }
  return metric;
}

std::string describe(const MetricConfig& metric) {
  char text[128];
  std::snprintf(text, sizeof text, "metric %u (%s, epsilon %u.%06u, domain %u)", metric.id,
                mechanism_name(metric.mechanism), metric.epsilon_micros / 1000000,
                metric.epsilon_micros % 1000000, metric.domain_size);
  return text;
}

}  // namespace blur::collector
