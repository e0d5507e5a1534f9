// Builders of decoded reports for collector tests.
#ifndef BLUR_TESTS_INCOMING_REPORTS_H
#define BLUR_TESTS_INCOMING_REPORTS_H

#include "model/incoming_report.h"

namespace blur_test {

// A well-formed binary randomized-response report (metric 1, epsilon 1).
inline blur::collector::IncomingReport binary_report(uint64_t report_id, bool bit) {
  blur::collector::IncomingReport r;
  r.report_id = report_id;
  r.metric_id = 1;
  r.mechanism = 1;
  r.epsilon_micros = 1000000;
  r.domain_size = 2;
  r.has_payload = true;
  r.payload = blur::PayloadKind::kBit;
  r.value = bit ? 1 : 0;
  return r;
}

}  // namespace blur_test

#endif  // BLUR_TESTS_INCOMING_REPORTS_H
