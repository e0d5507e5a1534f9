// Prefix extension (pem, word discovery): a report (level l, seed s,
// bucket y) supports every prefix w of length l + 2 with h_{l,s}(w) = y;
// tally = count per (l, s, y). No fixed domain to support: discovery/
// word_discovery.h grows candidates over the tally instead.
#include "blur/discovery/prefix_extension.h"

#include "mechanisms/mechanism_spec.h"

namespace blur::collector {

namespace {

std::string prefix_error(const MetricConfig& metric, const IncomingReport& r) {
  if (r.hash_a >= blur::PrefixExtension::levels(metric.domain_size) ||
      r.hash_b >= blur::kPrefixHashSeeds ||
      r.value >> blur::PrefixExtension::bucket_bits(metric.epsilon_micros) != 0) {
    return "prefix level, hash seed or bucket outside the family of " + describe(metric);
  }
  return {};
}

size_t prefix_tally_size(const MetricConfig& metric) {
  return size_t{blur::PrefixExtension::levels(metric.domain_size)} * blur::kPrefixHashSeeds
         << blur::PrefixExtension::bucket_bits(metric.epsilon_micros);
}

// Index ((level * seeds) + seed) * 2^g + bucket; the validator bounds each.
size_t prefix_cell(const MetricConfig& metric, const IncomingReport& report) {
  const uint32_t bits = blur::PrefixExtension::bucket_bits(metric.epsilon_micros);
  return ((size_t{report.hash_a} * blur::kPrefixHashSeeds + report.hash_b) << bits) | report.value;
}

void tally_prefix(const MetricConfig& metric, const IncomingReport& report, uint64_t multiplicity,
                  uint64_t* tally) {
  tally[prefix_cell(metric, report)] += multiplicity;
}

// Randomized response over 2^g buckets; another prefix shares the bucket
// with probability 2^-g over the family (prefix_hash.h).
OracleParams prefix_extension(const MetricConfig& metric) {
  const uint32_t g = 1u << blur::PrefixExtension::bucket_bits(metric.epsilon_micros);
  return OracleParams{randomized_response_params(metric.epsilon_micros, g).p,
                      1.0 / static_cast<double>(g)};
}

}  // namespace

template <>
MechanismSpec make_spec<MechanismId::kPrefixExtension>() {
  MechanismSpec spec;
  spec.id = MechanismId::kPrefixExtension;
  spec.max_domain = mechanism_max_domain(MechanismId::kPrefixExtension);
  spec.payload_error = prefix_error;
  spec.tally_size = prefix_tally_size;
  spec.tally = tally_prefix;
  spec.params = prefix_extension;
  spec.discovers_words = true;
  spec.cell = prefix_cell;
  return spec;
}

}  // namespace blur::collector
