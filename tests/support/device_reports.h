// Builders of SDK reports for tests and benchmarks.
#ifndef BLUR_TESTS_DEVICE_REPORTS_H
#define BLUR_TESTS_DEVICE_REPORTS_H

#include "blur/report/report.h"

namespace blur_test {

// A report with a scalar payload (rr: a bit, grr: an index).
inline blur::Report scalar_report(uint64_t report_id, uint32_t metric_id,
                                  blur::MechanismId mechanism, uint32_t epsilon_micros,
                                  uint32_t domain_size, uint32_t value) {
  blur::Report report{};
  report.report_id = report_id;
  report.metric_id = metric_id;
  report.mechanism = mechanism;
  report.epsilon_micros = epsilon_micros;
  report.domain_size = domain_size;
  report.payload.value = value;
  return report;
}

}  // namespace blur_test

#endif  // BLUR_TESTS_DEVICE_REPORTS_H
