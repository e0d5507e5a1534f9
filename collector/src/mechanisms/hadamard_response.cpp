// Hadamard response (hr): report j supports v iff popcount((v + 1) & j) is
// even; tally = count per j, turned into I_v by one Walsh-Hadamard
// transform.
#include "blur/mechanisms/hadamard_response.h"

#include <cmath>
#include <vector>

#include "mechanisms/counted_values.h"
#include "mechanisms/mechanism_spec.h"
#include "mechanisms/walsh_hadamard.h"

namespace blur::collector {

namespace {

// K, the Hadamard matrix's order: the tally's length and a report's bound.
uint32_t hadamard_order(const MetricConfig& metric) {
  return blur::hadamard_size(metric.domain_size);
}
size_t hadamard_tally_size(const MetricConfig& metric) { return hadamard_order(metric); }

// Report j supports v iff row v + 1 is +1 at j, so I_v = (n + w[v + 1]) / 2.
void hadamard_support(const MetricConfig& metric, const uint64_t* tally, uint64_t reports,
                      uint64_t* support) {
  std::vector<int64_t> w(tally, tally + hadamard_tally_size(metric));
  walsh_hadamard(w);
  for (uint32_t v = 0; v < metric.domain_size; ++v) {
    support[v] = static_cast<uint64_t>((static_cast<int64_t>(reports) + w[v + 1]) / 2);
  }
}

// Own value: randomized response into its half; others: exactly 1/2.
OracleParams hadamard(const MetricConfig& metric) {
  return OracleParams{1.0 / (1.0 + std::exp(-(metric.epsilon_micros / 1e6))), 0.5};
}

}  // namespace

template <>
MechanismSpec make_spec<MechanismId::kHadamardResponse>() {
  MechanismSpec spec;
  spec.id = MechanismId::kHadamardResponse;
  spec.max_domain = mechanism_max_domain(MechanismId::kHadamardResponse);
  spec.value_limit = hadamard_order;
  spec.tally_size = hadamard_tally_size;
  spec.tally = tally_value;
  spec.support = hadamard_support;
  spec.params = hadamard;
  return spec;
}

}  // namespace blur::collector
