// Estimates and series as rows for analysts' tools: CSV (RFC 4180) or JSON
// lines, one row per estimated value per period. The one place results
// become rows: `blur-collector export` and the read API's Accept: text/csv
// and application/x-ndjson answers both write through it.
//
// Frequency oracles and word discovery (one row per value or word):
//   metric_id,mechanism,epsilon,bucket,bucket_start,bucket_end,value,
//   estimate,stderr,ci95_low,ci95_high,fraction,estimate_normsub,n,design_effect
// Numeric mechanisms (one row per period: the mean, in grid units):
//   metric_id,mechanism,epsilon,bucket,bucket_start,bucket_end,
//   mean,stderr,ci95_low,ci95_high,n,design_effect
//
// bucket: "hour" or "day" (a series) or "all" (an estimate over the range);
// bucket_start/bucket_end: ISO 8601 UTC (2026-11-18T00:00:00Z), a series
// period's [start, end), an estimate's from/to (empty or null when open).
// value: the value of the domain (0..d-1), or the discovered word: text
// from devices, quoted where CSV needs it; bytes that are not UTF-8 become
// U+FFFD. estimate_normsub: with postprocess=norm-sub only. A number that
// is not finite is an empty cell (CSV) or null (JSON lines). CSV lines end
// in CRLF and start with the header, also when there are no rows; JSON
// lines are objects with the header's names as keys.
#ifndef BLUR_COLLECTOR_API_RESULT_ROWS_H
#define BLUR_COLLECTOR_API_RESULT_ROWS_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "api/metric_estimate.h"
#include "model/metric_config.h"

namespace blur::collector {

enum class ResultFormat { kJson, kCsv, kJsonLines };

// "csv" or "jsonl" (the export command's --format); nullopt otherwise.
std::optional<ResultFormat> row_format_from_name(std::string_view name);

// The period a table estimates: a series' period, or an estimate's range.
struct ResultPeriod {
  std::string_view bucket;  // "hour", "day" or "all"
  std::optional<int64_t> start, end;
};

class ResultRows {
 public:
  // `format`: kCsv or kJsonLines; `metric` fixes the columns.
  ResultRows(ResultFormat format, const MetricConfig& metric);
  void add(const ResultPeriod& period, const EstimateTable& table);
  std::string take() { return std::move(out_); }

 private:
  ResultFormat format_;
  MetricConfig metric_;
  std::string out_;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_API_RESULT_ROWS_H
