// A metric's sufficient statistics over some set of reports: what the store
// keeps per (metric, time bucket, collector node) and what an estimate
// reads. Frequency oracles keep a dense tally (registry/mechanism_spec.h
// says what it counts); numeric mechanisms keep exact moments and the
// histogram of reported values.
//
// Aggregates are mergeable (merging the aggregates of two sets of reports
// gives the aggregate of their union, exactly: everything is a count) and
// serializable, as google/differential-privacy's algorithms are (Merge,
// Serialize), so buckets, days and collector nodes add up.
#ifndef BLUR_COLLECTOR_AGGREGATE_AGGREGATE_H
#define BLUR_COLLECTOR_AGGREGATE_AGGREGATE_H

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "estimate/numeric_summary.h"
#include "ingest/batch.h"
#include "metrics/metric_config.h"
#include "util/outcome.h"

namespace blur::collector {

struct MechanismSpec;

class Aggregate {
 public:
  // Tallies longer than this whose reports each add to one cell (pem's,
  // tens of millions of cells) are kept as their nonzero cells: a commit of
  // a few reports then costs what it adds, not the whole tally. The
  // serialized form is the same.
  static constexpr size_t kSparseTallyCells = size_t{1} << 22;

  explicit Aggregate(const MetricConfig& metric);

  // Adds `multiplicity` copies of a validated report of this metric.
  void add(const IncomingReport& report, uint64_t multiplicity = 1);
  // Adds another aggregate of the same metric.
  void merge(const Aggregate& other);

  // Compact bytes (varints, runs of zero counts collapsed).
  std::string serialize() const;
  // Untrusted bytes (a database row): kInvalid unless they are exactly an
  // aggregate of this metric's shape.
  static Outcome<Aggregate> deserialize(const MetricConfig& metric, std::string_view bytes);
  // merge(deserialize(bytes)) without the intermediate aggregate (what an
  // estimate over many stored rows does); on kInvalid nothing is changed.
  Fallible add_serialized(std::string_view bytes);

  const MetricConfig& metric() const { return metric_; }
  uint64_t reports() const { return reports_; }
  bool numeric() const;
  // Frequency oracles: I_v for v in [0, domain_size) (RAPPOR: the summed
  // weights, h I_v).
  std::vector<uint64_t> support_counts() const;
  // Numeric mechanisms: the reported values.
  const NumericSummary& summary() const { return summary_; }
  // Frequency oracles: the whole tally (a copy; for a sparse one, filled in).
  std::vector<uint64_t> tally() const;

 private:
  const MechanismSpec* spec_;
  MetricConfig metric_;
  uint64_t reports_ = 0;
  Fallible add_sparse(std::string_view tally_bytes, uint64_t reports);
  std::vector<uint64_t> tally_;  // frequency oracles
  size_t sparse_length_ = 0;     // > 0: the tally is sparse_cells_ instead
  std::unordered_map<uint64_t, uint64_t> sparse_cells_;
  NumericSummary summary_;       // numeric mechanisms
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_AGGREGATE_AGGREGATE_H
