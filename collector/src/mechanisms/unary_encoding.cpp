// Unary encodings (sue, oue): a report supports every value whose bit is
// set; tally = count per bit.
#include "blur/mechanisms/unary_encoding.h"
#include "mechanisms/counted_values.h"
#include "mechanisms/mechanism_spec.h"

namespace blur::collector {

OracleParams symmetric_unary_params(uint32_t epsilon_micros, uint32_t longitudinal_epsilon_micros,
                                    uint32_t domain_size) {
  using blur::UnaryEncoding;
  constexpr auto kSymmetric = UnaryEncoding::Kind::kSymmetric;
  const double q =
      longitudinal_epsilon_micros == 0
          ? dyadic(UnaryEncoding::flip_numerator(kSymmetric, epsilon_micros))
          : memoized_flip(dyadic(UnaryEncoding::flip_numerator(kSymmetric,
                                                               longitudinal_epsilon_micros)),
                          epsilon_micros, domain_size);
  return OracleParams{1.0 - q, q};
}

OracleParams optimized_unary_params(uint32_t epsilon_micros) {
  using blur::UnaryEncoding;
  return OracleParams{
      0.5, dyadic(UnaryEncoding::flip_numerator(UnaryEncoding::Kind::kOptimized, epsilon_micros))};
}

namespace {

void tally_bits(const MetricConfig& metric, const IncomingReport& report, uint64_t multiplicity,
                uint64_t* tally) {
  tally_set_bits(report.bits, metric.domain_size, multiplicity, tally);
}

// One bit per value, none set past the domain.
std::string bits_error(const MetricConfig& metric, const IncomingReport& r) {
  const size_t bytes = (metric.domain_size + 7) / 8;
  if (r.bits.size() != bytes) {
    return "bit vector of " + std::to_string(r.bits.size()) + " bytes, expected " +
           std::to_string(bytes) + " for " + describe(metric);
  }
  const unsigned padding = 8 * bytes - metric.domain_size;
  if (padding > 0 && (static_cast<uint8_t>(r.bits.back()) >> (8 - padding)) != 0) {
    return "bits set past the domain of " + describe(metric);
  }
  return {};
}

OracleParams symmetric_unary(const MetricConfig& metric) {
  return symmetric_unary_params(metric.epsilon_micros, metric.longitudinal_epsilon_micros,
                                metric.domain_size);
}
OracleParams optimized_unary(const MetricConfig& metric) {
  return optimized_unary_params(metric.epsilon_micros);
}

MechanismSpec unary_encoding_spec(MechanismId id) {
  MechanismSpec spec;
  spec.id = id;
  spec.max_domain = mechanism_max_domain(id);
  spec.payload_error = bits_error;
  spec.tally_size = per_value_size;
  spec.tally = tally_bits;
  spec.support = support_is_tally;
  return spec;
}

}  // namespace

template <>
MechanismSpec make_spec<MechanismId::kSymmetricUnaryEncoding>() {
  MechanismSpec spec = unary_encoding_spec(MechanismId::kSymmetricUnaryEncoding);
  spec.memoizable = true;
  spec.params = symmetric_unary;
  return spec;
}

template <>
MechanismSpec make_spec<MechanismId::kOptimizedUnaryEncoding>() {
  MechanismSpec spec = unary_encoding_spec(MechanismId::kOptimizedUnaryEncoding);
  spec.params = optimized_unary;
  return spec;
}

}  // namespace blur::collector
