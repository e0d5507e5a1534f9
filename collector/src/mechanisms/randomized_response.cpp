// Randomized response (rr, grr): a report supports exactly its value;
// tally = count per value.
#include "mechanisms/counted_values.h"
#include "mechanisms/mechanism_spec.h"

namespace blur::collector {

namespace {

OracleParams randomized_response(const MetricConfig& metric) {
  return randomized_response_params(metric.epsilon_micros, metric.domain_size);
}

MechanismSpec randomized_response_spec(MechanismId id) {
  MechanismSpec spec;
  spec.id = id;
  spec.max_domain = mechanism_max_domain(id);
  spec.tally_size = per_value_size;
  spec.tally = tally_value;
  spec.support = support_is_tally;
  spec.params = randomized_response;
  return spec;
}

}  // namespace

template <>
MechanismSpec make_spec<MechanismId::kBinaryRandomizedResponse>() {
  MechanismSpec spec = randomized_response_spec(MechanismId::kBinaryRandomizedResponse);
  spec.fixed_domain = 2;
  return spec;
}

template <>
MechanismSpec make_spec<MechanismId::kGeneralizedRandomizedResponse>() {
  return randomized_response_spec(MechanismId::kGeneralizedRandomizedResponse);
}

}  // namespace blur::collector
