// A metric's sufficient statistics over some set of reports: what the store
// keeps per (metric, time bucket, collector node) and what an estimate
// reads. Frequency oracles keep a dense tally (mechanisms/mechanism_spec.h
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
#include <vector>

#include "aggregate/numeric_summary.h"
#include "aggregate/sparse_counts.h"
#include "model/incoming_report.h"
#include "model/metric_config.h"
#include "util/outcome.h"

namespace blur::collector {

class VarintReader;

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
  // serialize() of this aggregate merged with deserialize(stored), and the
  // sum's report count: what a commit writes back to a stored row. For a
  // sparse tally one pass over the stored bytes, without building their
  // cells (a commit of a few reports to a large row costs a copy of the
  // row, not a hash table of it). kInvalid if `stored` is not exactly an
  // aggregate of this metric's shape.
  struct SerializedSum {
    std::string bytes;
    uint64_t reports = 0;
  };
  Outcome<SerializedSum> serialize_added_to(std::string_view stored) const;
  // Before adding serialized rows of `bytes` bytes in all: room for their
  // cells at once, instead of growing (and rehashing) row by row. A hint.
  void reserve_serialized(size_t bytes);

  const MetricConfig& metric() const { return metric_; }
  uint64_t reports() const { return reports_; }
  bool numeric() const;
  // Frequency oracles: I_v for v in [0, domain_size) (RAPPOR: the summed
  // weights, h I_v).
  std::vector<uint64_t> support_counts() const;
  // The same for `values` only: result[i] is I at values[i].
  std::vector<uint64_t> support_counts(const std::vector<uint32_t>& values) const;
  // Numeric mechanisms: the reported values.
  const NumericSummary& summary() const { return summary_; }
  // Frequency oracles: the whole tally (a copy; for a sparse one, filled in).
  std::vector<uint64_t> tally() const;
  // Frequency oracles: the tally itself when it is kept dense, else null
  // (then for_each_tally_cell reads it without filling in the zeros).
  const std::vector<uint64_t>* dense_tally() const {
    return sparse_length_ == 0 ? &tally_ : nullptr;
  }
  // Frequency oracles: f(index, count) for every nonzero cell, in no
  // particular order.
  template <typename F>
  void for_each_tally_cell(F&& f) const {
    if (sparse_length_ == 0) {
      for (size_t i = 0; i < tally_.size(); ++i) {
        if (tally_[i] != 0) f(static_cast<uint64_t>(i), tally_[i]);
      }
      return;
    }
    sparse_cells_.for_each([&](uint64_t cell, uint64_t count) {
      if (count != 0) f(cell, count);
    });
  }
  // A fingerprint of the content (every count, the report count and the
  // histogram), keyed with a secret drawn once per process: equal
  // aggregates have equal fingerprints, and reports crafted without the
  // key collide with another aggregate's with probability 2^-64. Order
  // independent (a sum of keyed cell hashes), O(nonzero cells).
  uint64_t fingerprint() const;

 private:
  const MechanismSpec* spec_;
  MetricConfig metric_;
  uint64_t reports_ = 0;
  Fallible add_sparse(std::string_view tally_bytes, uint64_t reports);
  // kInvalid naming this metric and what is wrong with its stored bytes.
  Error corrupt(const char* what) const;
  // Stored bytes' header (format version, mechanism, report count) checked
  // against this aggregate; `reader` is left at what follows it.
  Outcome<uint64_t> read_header(std::string_view bytes, VarintReader* reader) const;
  std::vector<uint64_t> tally_;  // frequency oracles
  size_t sparse_length_ = 0;     // > 0: the tally is sparse_cells_ instead
  SparseCounts sparse_cells_;
  NumericSummary summary_;       // numeric mechanisms
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_AGGREGATE_AGGREGATE_H
