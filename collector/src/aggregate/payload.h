// The one flat form of a validated report's randomized output: what the
// store keeps in a raw report row, what duplicate detection compares, and
// what re-aggregation reads back. By payload kind (the metric's mechanism):
//   bit, index:   varint value
//   number:       zigzag varint
//   local hash:   varint a, varint b, varint bucket
//   bits:         the bit vector's bytes
//   bloom:        varint cohort, then the filter's bytes
#ifndef BLUR_COLLECTOR_AGGREGATE_PAYLOAD_H
#define BLUR_COLLECTOR_AGGREGATE_PAYLOAD_H

#include <string>
#include <string_view>

#include "model/incoming_report.h"
#include "model/metric_config.h"

namespace blur::collector {

std::string flatten_payload(const IncomingReport& report);

// Sets the payload fields of *report from `bytes` for `metric`'s mechanism;
// false if they are not a flat payload of that kind.
bool unflatten_payload(const MetricConfig& metric, std::string_view bytes, IncomingReport* report);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_AGGREGATE_PAYLOAD_H
