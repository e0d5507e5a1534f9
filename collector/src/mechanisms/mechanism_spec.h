// The collector's half of a mechanism: one spec per line of the SDK's
// mechanism table, keyed by its MechanismId, built field by field in the
// mechanism family's own file in this folder (randomized_response.cpp,
// unary_encoding.cpp, hadamard_response.cpp, local_hashing.cpp, rappor.cpp,
// prefix_extension.cpp, fragment_puzzle.cpp, numeric_means.cpp). A spec
// says what a metric of the mechanism may be configured as, what a report's
// payload must hold, which sufficient statistics the store keeps for it,
// and the estimator's parameters. Nothing outside this folder branches on
// a MechanismId: it reads these fields.
//
//   frequency oracles keep a dense tally of counts (an Aggregate), whose
//   length tally_size() gives; tally() adds one validated report; support()
//   turns the tally into I_v, the number of reports supporting each value v
//   (Wang et al. 2017), and params() gives the p, q of the one estimator core
//   (estimate/frequency_oracle.h). The rules:
//
//   randomized response (rr, grr): a report supports exactly its value;
//     tally = count per value.
//   unary encodings (sue, oue): a report supports every value whose bit is
//     set; tally = count per bit.
//   Hadamard response (hr): report j supports v iff popcount((v + 1) & j) is
//     even; tally = count per j, turned into I_v by one Walsh-Hadamard
//     transform.
//   local hashing (olh, blh, loloha): (a, b, y) supports v iff
//     top(a v + b) = y, i.e. top(a v) = y xor top(b); tally = count per
//     (a, that key), and a v is evaluated once per a with nonzero counts and
//     value.
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
//   histogram of reported values (aggregate/numeric_summary.h) instead;
//   numeric_mean() says how the reports' mean estimates the devices'.
#ifndef BLUR_COLLECTOR_MECHANISMS_MECHANISM_SPEC_H
#define BLUR_COLLECTOR_MECHANISMS_MECHANISM_SPEC_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "mechanisms/numeric_mean.h"
#include "mechanisms/oracle_params.h"
#include "model/incoming_report.h"
#include "model/metric_config.h"

namespace blur::collector {

struct MechanismSpec {
  MechanismId id = MechanismId::kBinaryRandomizedResponse;
  bool numeric = false;
  // The largest domain the collector estimates: the device's limit, or
  // lower where estimating costs more per value (RAPPOR hashes every
  // candidate once per cohort).
  uint32_t max_domain = 0;
  // Nonzero: the only domain size (rr: 2); a metric may then leave it out.
  uint32_t fixed_domain = 0;
  // Whether a metric may have a longitudinal epsilon (a memoized form).
  bool memoizable = false;
  // Whether the metric carries a Bloom filter shape and hash key (rappor).
  bool bloom_filter = false;
  // The mechanism's own configuration rules past the common ones (an
  // empty string if valid); nullptr: none.
  std::string (*check)(const MetricConfig& metric) = nullptr;
  // The payload's own rules once its kind matches the mechanism (an empty
  // string if valid); nullptr: none.
  std::string (*payload_error)(const MetricConfig& metric, const IncomingReport& report) = nullptr;
  // The exclusive upper bound of a scalar report's value; nullptr: the
  // domain size.
  uint32_t (*value_limit)(const MetricConfig& metric) = nullptr;

  // Frequency oracles only (nullptr for numeric mechanisms):
  size_t (*tally_size)(const MetricConfig& metric) = nullptr;
  void (*tally)(const MetricConfig& metric, const IncomingReport& report, uint64_t multiplicity,
                uint64_t* tally) = nullptr;
  // support[0..domain_size) from the tally of `reports` reports.
  void (*support)(const MetricConfig& metric, const uint64_t* tally, uint64_t reports,
                  uint64_t* support) = nullptr;
  // support[i] for each of values[0..count) only, where that is cheaper
  // than every value's (local hashing: a few values of a wide domain, as a
  // chart of one value asks); nullptr: support() and pick.
  void (*support_at)(const MetricConfig& metric, const uint64_t* tally, uint64_t reports,
                     const uint32_t* values, size_t count, uint64_t* support) = nullptr;
  OracleParams (*params)(const MetricConfig& metric) = nullptr;
  // Word discovery (pem, sfp): no support(); estimates are discovered words.
  bool discovers_words = false;
  // sfp: words are joined from fragments (discovery/fragment_puzzle_discovery.h)
  // instead of grown prefix by prefix (discovery/word_discovery.h).
  bool joins_fragments = false;
  // For tallies where a report adds to exactly one cell: which one. With a
  // tally past Aggregate::kSparseTallyCells (pem: levels x 2^14 seeds x 2^g
  // buckets) the aggregate keeps only the nonzero cells.
  size_t (*cell)(const MetricConfig& metric, const IncomingReport& report) = nullptr;

  // Numeric mechanisms only: how the reports' mean estimates the devices'.
  NumericMean (*numeric_mean)(const MetricConfig& metric) = nullptr;
};

// Each mechanism's spec, defined in its family's file; one declaration per
// line of the SDK's table, so a mechanism without a spec does not link.
template <MechanismId kId>
MechanismSpec make_spec();
#define BLUR_X(number, Cpp, name, C, PROTO, Payload, max_domain) \
  template <>                                                    \
  MechanismSpec make_spec<MechanismId::k##Cpp>();
BLUR_MECHANISM_TABLE(BLUR_X)
#undef BLUR_X

const MechanismSpec& mechanism_spec(MechanismId id);

// The estimator parameters of a metric's mechanism ({0.5, 0.5} for numeric ones).
OracleParams oracle_params(const MetricConfig& metric);

// "rr", "grr", ... <-> MechanismId (names from the SDK's mechanism table).
std::optional<MechanismId> mechanism_from_name(const std::string& name);
// "rr, grr, sue, ..." for messages: every mechanism, or those `which` keeps.
std::string mechanism_names(bool (*which)(const MechanismSpec& spec) = nullptr);
bool is_numeric(MechanismId mechanism);

// The exclusive upper bound of a scalar report's value: the domain, or K
// for Hadamard response.
uint32_t report_value_limit(const MetricConfig& metric);

// Why a report's payload does not fit its metric (the payload kind of the
// metric's mechanism, then the mechanism's own rules); empty if it fits.
std::string payload_shape_error(const MetricConfig& metric, const IncomingReport& report);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_MECHANISMS_MECHANISM_SPEC_H
