#include "mechanisms/mechanism_spec.h"

namespace blur::collector {

// One spec per line of the SDK's table, built once by its family's
// make_spec (a mechanism in the table without one does not link).
const MechanismSpec& mechanism_spec(MechanismId id) {
  switch (id) {
#define BLUR_X(number, Cpp, name, C, PROTO, Payload, max_domain)        \
  case MechanismId::k##Cpp: {                                           \
    static const MechanismSpec spec = make_spec<MechanismId::k##Cpp>(); \
    return spec;                                                        \
  }
    BLUR_MECHANISM_TABLE(BLUR_X)
#undef BLUR_X
  }
  // unreachable: ids are validated
  return mechanism_spec(MechanismId::kBinaryRandomizedResponse);
}

OracleParams oracle_params(const MetricConfig& metric) {
  const MechanismSpec& spec = mechanism_spec(metric.mechanism);
  return spec.params ? spec.params(metric) : OracleParams{0.5, 0.5};
}

std::optional<MechanismId> mechanism_from_name(const std::string& name) {
#define BLUR_X(id, Cpp, short_name, C, PROTO, Payload, max_domain) \
  if (name == #short_name) return MechanismId::k##Cpp;
  BLUR_MECHANISM_TABLE(BLUR_X)
#undef BLUR_X
  return std::nullopt;
}

std::string mechanism_names(bool (*which)(const MechanismSpec& spec)) {
  std::string names;
#define BLUR_X(id, Cpp, short_name, C, PROTO, Payload, max_domain)      \
  if (which == nullptr || which(mechanism_spec(MechanismId::k##Cpp))) { \
    names += names.empty() ? #short_name : ", " #short_name;            \
  }
  BLUR_MECHANISM_TABLE(BLUR_X)
#undef BLUR_X
  return names;
}

bool is_numeric(MechanismId mechanism) { return mechanism_spec(mechanism).numeric; }

uint32_t report_value_limit(const MetricConfig& metric) {
  const MechanismSpec& spec = mechanism_spec(metric.mechanism);
  return spec.value_limit ? spec.value_limit(metric) : metric.domain_size;
}

// Empty string if the report's payload has the metric's kind and every
// field is within its shape (an index in the domain, a bit vector of the
// right length, a hash seed, level and bucket of the family, ...), else
// what is wrong. The batch validator and the reader of stored raw reports
// both ask it, so nothing outside the shape reaches an aggregate.
std::string payload_shape_error(const MetricConfig& metric, const IncomingReport& r) {
  const PayloadKind shape = blur::mechanism_payload(metric.mechanism);
  if (!r.has_payload || r.payload != shape) {
    static const char* const kNames[] = {"bit", "index", "bits", "value", "local_hash", "bloom"};
    return std::string("payload must be `") + kNames[static_cast<int>(shape)] + "` for " +
           blur::mechanism_name(metric.mechanism);
  }
  const MechanismSpec& spec = mechanism_spec(metric.mechanism);
  if (spec.payload_error != nullptr) return spec.payload_error(metric, r);
  if ((shape == PayloadKind::kBit || shape == PayloadKind::kIndex) &&
      r.value >= report_value_limit(metric)) {
    return "index " + std::to_string(r.value) + " is outside the domain of " + describe(metric);
  }
  return {};
}

}  // namespace blur::collector
