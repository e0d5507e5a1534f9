#include "estimate/support_counter.h"

namespace blur::collector {

SupportCounter::SupportCounter(const MetricConfig& metric)
    : metric_(metric), counts_(metric.domain_size, 0) {}

void SupportCounter::add(uint32_t report_value, uint64_t multiplicity) {
  reports_ += multiplicity;
  switch (metric_.mechanism) {
    case Mechanism::kBinaryRandomizedResponse:
    case Mechanism::kGeneralizedRandomizedResponse:
      if (report_value < counts_.size()) counts_[report_value] += multiplicity;
      return;
  }
}

}  // namespace blur::collector
