// The collector's half of a mechanism: one spec per line of the SDK's
// mechanism table, keyed by its MechanismId. A spec says what a report's
// payload supports, which sufficient statistics the store keeps for it, and
// the estimator's parameters:
//
//   frequency oracles keep a dense tally of counts (an Aggregate), whose
//   length tally_size() gives; tally() adds one validated report; support()
//   turns the tally into I_v, the number of reports supporting each value v
//   (Wang et al. 2017), and params() gives the p, q of the one estimator core
//   (frequency_oracle.h). The rules:
//
//   randomized response (rr, grr): a report supports exactly its value;
//     tally = count per value.
//   unary encodings (sue, oue): a report supports every value whose bit is
//     set; tally = count per bit.
//   Hadamard response (hr): report j supports v iff popcount((v + 1) & j) is
//     even; tally = count per j, turned into I_v by one Walsh-Hadamard
//     transform.
//   local hashing (olh, blh): (a, b, y) supports v iff top(a v + b) = y, i.e.
//     top(a v) = y xor top(b); tally = count per (a, that key), and a v is
//     evaluated once per a with nonzero counts and value.
//   prefix extension (pem, word discovery): a report (level l, seed s,
//     bucket y) supports every prefix w of length l + 2 with h_{l,s}(w) = y;
//     tally = count per (l, s, y). There is no fixed domain to support:
//     discovery/word_discovery.h grows candidates over the tally instead.
//   sequence fragment puzzle (sfp, word discovery): a report (position i,
//     fragment seed t, word seed s, buckets (y_f, y_w)) supports every word
//     w with h_s(w) = y_w and every (piece, fragment) x of position i with
//     h_{i,t}(x) = y_f; tally = count per (s, y_w), then per (i, t, y_f).
//     discovery/fragment_puzzle_discovery.h joins fragments into words.
//   RAPPOR (rappor): (cohort c, filter r) supports v with weight
//     sum_j r[position_j(v, c)] (0..h); tally = count per (cohort, bit), and
//     v's positions are hashed once per cohort with reports.
//
//   numeric mechanisms (laplace, onebit) keep exact moments and the
//   histogram of reported values (NumericSummary) instead.
#ifndef BLUR_COLLECTOR_REGISTRY_MECHANISM_SPEC_H
#define BLUR_COLLECTOR_REGISTRY_MECHANISM_SPEC_H

#include <cstddef>
#include <cstdint>

#include "estimate/frequency_oracle.h"
#include "ingest/batch.h"
#include "metrics/metric_config.h"

namespace blur::collector {

struct MechanismSpec {
  MechanismId id;
  bool numeric;
  // The largest domain the collector estimates: the device's limit, or
  // lower where estimating costs more per value (RAPPOR hashes every
  // candidate once per cohort).
  uint32_t max_domain;
  // Frequency oracles only (nullptr for numeric mechanisms):
  size_t (*tally_size)(const MetricConfig& metric);
  void (*tally)(const MetricConfig& metric, const IncomingReport& report, uint64_t multiplicity,
                uint64_t* tally);
  // support[0..domain_size) from the tally of `reports` reports.
  void (*support)(const MetricConfig& metric, const uint64_t* tally, uint64_t reports,
                  uint64_t* support);
  OracleParams (*params)(const MetricConfig& metric);
  // Word discovery (pem, sfp): no support(); estimates are discovered words.
  bool discovers_words = false;
  // For tallies where a report adds to exactly one cell: which one. With a
  // tally past Aggregate::kSparseTallyCells (pem: levels x 2^14 seeds x 2^g
  // buckets) the aggregate keeps only the nonzero cells.
  size_t (*cell)(const MetricConfig& metric, const IncomingReport& report) = nullptr;
};

const MechanismSpec& mechanism_spec(MechanismId id);

// The estimator parameters of a metric's mechanism ({0.5, 0.5} for numeric ones).
OracleParams oracle_params(const MetricConfig& metric);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_REGISTRY_MECHANISM_SPEC_H
