// A metric as the collector knows it: the id devices report under, the
// mechanism and epsilon its reports must carry. Reports are validated
// against this before anything is stored.
#ifndef BLUR_COLLECTOR_METRICS_METRIC_CONFIG_H
#define BLUR_COLLECTOR_METRICS_METRIC_CONFIG_H

#include <cstdint>
#include <optional>
#include <string>

#include "blur/local_hashing.h"
#include "blur/rappor.h"

namespace blur::collector {

// Values equal blur.proto's Mechanism enum.
enum class Mechanism : uint32_t {
  kBinaryRandomizedResponse = 1,       // "rr": a bit
  kGeneralizedRandomizedResponse = 2,  // "grr": an index in [0, domain)
  kSymmetricUnaryEncoding = 3,         // "sue": a bit vector of domain bits
  kOptimizedUnaryEncoding = 4,         // "oue": a bit vector of domain bits
  kDiscreteLaplace = 5,                // "laplace": a value in [0, domain) plus noise
  kOneBitMean = 6,                     // "onebit": one bit for a value in [0, domain)
  kHadamardResponse = 7,               // "hr": an index in [0, K), K = 2^ceil(log2(domain + 1))
  kOptimizedLocalHashing = 8,          // "olh": hash seed + bucket, g ~ e^eps + 1
  kBinaryLocalHashing = 9,             // "blh": hash seed + bucket, g = 2
  kRappor = 10,                        // "rappor": cohort + Bloom filter (RapporShape)
};

// Numeric mechanisms estimate a mean of values 0..domain-1, not frequencies.
bool is_numeric(Mechanism mechanism);

// The payload field a mechanism's reports carry.
enum class PayloadShape { kBit, kIndex, kBits, kNumber, kLocalHash, kBloom };
PayloadShape payload_shape(Mechanism mechanism);

// "rr", "grr", "sue", "oue", "hr", "olh", "blh", "rappor", "laplace", "onebit"
// <-> Mechanism.
std::optional<Mechanism> mechanism_from_name(const std::string& name);
const char* mechanism_name(Mechanism mechanism);

struct MetricConfig {
  uint32_t id = 0;
  Mechanism mechanism = Mechanism::kBinaryRandomizedResponse;
  uint32_t epsilon_micros = 0;
  uint32_t domain_size = 2;  // number of possible true values
  // rappor only: the filter shape and the hash key (with `id`) devices use.
  // Candidates are the integers 0..domain_size-1, hashed as decimal text.
  blur::RapporShape rappor{};
  uint64_t hash_key = 0;
};

bool operator==(const MetricConfig& a, const MetricConfig& b);

// The exclusive upper bound of a scalar report's value: the domain, or K
// for Hadamard response.
uint32_t report_value_limit(const MetricConfig& metric);

// Local hashing: the field and bucket sizes of the metric's hash family,
// computed by the SDK's own rule (blur::LocalHashing::shape).
blur::LocalHashShape local_hash_shape(const MetricConfig& metric);

// Parses a decimal epsilon ("1", "0.25", "1.5e0" is not accepted) into
// micro-nats, truncating digits past the sixth decimal, as the SDK does.
// Returns nothing for malformed, zero or over-20-nat values.
std::optional<uint32_t> parse_epsilon_micros(const std::string& text);

// Parses "ID:MECHANISM:EPSILON[:DOMAIN]", e.g. "1:rr:1.0" or "2:grr:2:16"
// (rr has domain 2; grr needs 2..65536; hr 2..65535; sue, oue, olh and blh
// 2..4096;
// laplace and onebit, the integer grid 0..DOMAIN-1, 2..2^24; rappor 2..65536
// candidates, with the default RapporShape: 256-bit filter, 2 hashes,
// 64 cohorts, hash key 0). On failure returns nothing and sets
// *error to a message naming the problem.
std::optional<MetricConfig> parse_metric_spec(const std::string& spec, std::string* error);

std::string describe(const MetricConfig& metric);  // "metric 2 (grr, epsilon 2.000000, domain 16)"

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_METRICS_METRIC_CONFIG_H
