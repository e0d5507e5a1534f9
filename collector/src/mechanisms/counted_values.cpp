#include "mechanisms/counted_values.h"

#include <algorithm>

namespace blur::collector {

size_t per_value_size(const MetricConfig& metric) { return metric.domain_size; }

void support_is_tally(const MetricConfig& metric, const uint64_t* tally, uint64_t,
                      uint64_t* support) {
  std::copy(tally, tally + metric.domain_size, support);
}

void tally_value(const MetricConfig&, const IncomingReport& report, uint64_t multiplicity,
                 uint64_t* tally) {
  tally[report.value] += multiplicity;
}

void tally_set_bits(const std::string& bytes, size_t bits, uint64_t multiplicity, uint64_t* row) {
  const size_t used = std::min<size_t>(bytes.size(), (bits + 7) / 8);
  for (size_t byte = 0; byte < used; ++byte) {
    for (unsigned set = static_cast<uint8_t>(bytes[byte]); set != 0; set &= set - 1) {
      const size_t bit = 8 * byte + static_cast<size_t>(__builtin_ctz(set));
      if (bit < bits) row[bit] += multiplicity;
    }
  }
}

}  // namespace blur::collector
