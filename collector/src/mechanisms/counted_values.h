// Tallies shared by several families: one count per value (randomized
// response, Hadamard response's per-j count) and one count per set bit of
// a bit vector (unary encodings, a RAPPOR cohort's filter).
#ifndef BLUR_COLLECTOR_MECHANISMS_COUNTED_VALUES_H
#define BLUR_COLLECTOR_MECHANISMS_COUNTED_VALUES_H

#include <cstddef>
#include <cstdint>
#include <string>

#include "model/incoming_report.h"
#include "model/metric_config.h"

namespace blur::collector {

// One cell per value of the domain.
size_t per_value_size(const MetricConfig& metric);

// A report adds to the cell of its value.
void tally_value(const MetricConfig& metric, const IncomingReport& report, uint64_t multiplicity,
                 uint64_t* tally);

// A tally of one cell per value is its support.
void support_is_tally(const MetricConfig& metric, const uint64_t* tally, uint64_t reports,
                      uint64_t* support);

// row[i] += multiplicity for every bit i set in the first `bits` bits of
// `bytes` (bit i: byte i / 8, bit i % 8).
void tally_set_bits(const std::string& bytes, size_t bits, uint64_t multiplicity, uint64_t* row);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_MECHANISMS_COUNTED_VALUES_H
