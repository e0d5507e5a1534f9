// How an estimate's reports are spread over devices, and the one variance
// bound that covers the reports of one device being correlated however they
// are (its true value repeats; a memoized mechanism repeats the same
// permanent response exactly).
//
// Every estimator here is a sum over reports of a term T_i whose variance
// lies in [floor, ceiling], devices are independent, and the usual
// ("independent") variance is V = sum_i Var T_i. For device d with m_d
// reports, Cauchy-Schwarz gives Var(sum_{i in d} T_i) <= m_d sum_{i in d}
// Var T_i whatever the correlation, so with Var T_i = floor + e_i:
//
//   Var(total) <= floor S2 + min(m_max (V - n floor), S2 (ceiling - floor))
//
// with n = sum_d m_d, S2 = sum_d m_d^2, m_max = max_d m_d. It is V when
// every device sends one report (S2 = n, m_max = 1), the design effect
// S2 / n times V when every report has the same variance, and an upper
// bound on the true variance whenever V is the reports' summed variance
// (docs/math.md §4.1; V itself is the estimator's plug-in, as before).
//
// The counts come from the store's contribution-bound counts per (metric,
// bucket, device), grouped by device over the estimate's buckets. Reports
// whose counts are gone (pruned with the raw reports after the metric's
// retention; aggregates stay) are "uncounted": each of their devices is
// assumed to have sent up to `uncounted_cap` of them (the bound per bucket
// times the buckets of the estimate), which is conservative.
#ifndef BLUR_COLLECTOR_ESTIMATE_DEVICE_CLUSTERING_H
#define BLUR_COLLECTOR_ESTIMATE_DEVICE_CLUSTERING_H

#include <cstdint>
#include <string>

#include "model/metric_config.h"
#include "store/device_counts.h"

namespace blur::collector {

// Whether a metric's estimates need the device counts: memoized metrics,
// whose reports of one device share a permanent response. One-shot reports
// draw fresh noise each, so they are independent given the devices' values,
// which is what every estimate conditions on (it counts the reports with
// each value, docs/math.md §4.1): the textbook variance is exact for them,
// and no device counts are read.
inline bool needs_device_clustering(const MetricConfig& metric) {
  return metric.longitudinal_epsilon_micros != 0;
}

class DeviceClustering {
 public:
  // Every report from a device of its own (the textbook variance).
  static DeviceClustering one_report_per_device(uint64_t reports);
  // One-shot reports: independent given the devices' values (the textbook
  // variance), however many one device sent.
  static DeviceClustering independent_given_values(uint64_t reports);
  // `reports` of the estimate, `counted` of them with known devices; each
  // device behind the other reports sent at most `uncounted_cap` of them.
  // Counts above `reports` (a commit between the two reads) are taken as
  // the shape of the estimate's devices.
  static DeviceClustering from_counts(uint64_t reports, const DeviceCounts& counted,
                                      uint64_t uncounted_cap);

  uint64_t reports() const { return reports_; }
  uint64_t devices() const { return devices_; }
  uint64_t uncounted_reports() const { return uncounted_; }
  uint64_t uncounted_cap() const { return uncounted_cap_; }  // reports per uncounted device
  double sum_squares() const { return sum_squares_; }        // upper bound on S2
  double max_reports() const { return max_reports_; }        // upper bound on m_max
  // S2 / n: 1 when every device sends one report.
  double design_effect() const;
  bool one_per_device() const { return design_effect() <= 1.0; }
  bool one_shot() const { return one_shot_; }

  // The bound above for a sum of per-report terms: `independent` = V.
  double variance(double independent, double floor, double ceiling) const;

 private:
  uint64_t reports_ = 0;
  uint64_t devices_ = 0;
  uint64_t uncounted_ = 0;
  uint64_t uncounted_cap_ = 0;
  double sum_squares_ = 0;
  double max_reports_ = 1;
  bool one_shot_ = false;
};

// The clustering of a metric's estimate over `buckets` buckets holding
// `reports` reports, from the store's counts over the same buckets: an
// uncounted report's device sent at most the metric's bound per bucket in
// each of them. A one-shot metric: independent_given_values (no counts).
DeviceClustering metric_clustering(const MetricConfig& metric, uint64_t reports,
                                   const DeviceCounts& counted, uint64_t buckets);

// How the intervals were computed, for the answer:
// "independent reports (one per device)",
// "device-clustered (design effect 3.2 over 1,204 devices)", and with
// uncounted reports "...; 5,000 reports without device counts (pruned),
// bounded by 96 per device".
std::string describe_variance(const DeviceClustering& clustering);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_ESTIMATE_DEVICE_CLUSTERING_H
