// A numeric metric's sufficient statistics: the number of reports, their
// exact moments and the histogram of reported values (what an Aggregate of
// a numeric mechanism keeps; estimate/numeric_estimate.h estimates from it).
#ifndef BLUR_COLLECTOR_AGGREGATE_NUMERIC_SUMMARY_H
#define BLUR_COLLECTOR_AGGREGATE_NUMERIC_SUMMARY_H

#include <cstdint>
#include <map>

namespace blur::collector {

// The moments are exact 128-bit integers while they fit. Values come from
// devices (any sint64) and from stored aggregates (any multiplicity), so a
// sum may not fit: then the moment is computed from the histogram in long
// double instead (never an overflow, never undefined behaviour).
class NumericSummary {
 public:
  void add(int64_t value, uint64_t multiplicity = 1);

  uint64_t reports() const { return reports_; }
  double mean() const;
  double sample_variance() const;
  const std::map<int64_t, uint64_t>& histogram() const { return histogram_; }

 private:
  long double wide_mean() const;

  uint64_t reports_ = 0;
  __int128 sum_ = 0;                  // exact while sum_exact_
  unsigned __int128 sum_squares_ = 0;  // exact while squares_exact_
  bool sum_exact_ = true;
  bool squares_exact_ = true;
  std::map<int64_t, uint64_t> histogram_;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_AGGREGATE_NUMERIC_SUMMARY_H
