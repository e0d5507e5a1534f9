#include "estimate/support_counter.h"

namespace blur::collector {

SupportCounter::SupportCounter(const MetricConfig& metric)
    : metric_(metric), counts_(metric.domain_size, 0) {}

void SupportCounter::add(uint32_t report_value, const std::string& bits, uint64_t multiplicity) {
  reports_ += multiplicity;
  if (payload_shape(metric_.mechanism) != PayloadShape::kBits) {
    if (report_value < counts_.size()) counts_[report_value] += multiplicity;
    return;
  }
  for (size_t byte = 0; byte < bits.size(); ++byte) {
    // Visit the set bits only (ctz), not every value of the domain.
    for (unsigned set = static_cast<uint8_t>(bits[byte]); set != 0; set &= set - 1) {
      const size_t value = 8 * byte + static_cast<size_t>(__builtin_ctz(set));
      if (value < counts_.size()) counts_[value] += multiplicity;
    }
  }
}

}  // namespace blur::collector
