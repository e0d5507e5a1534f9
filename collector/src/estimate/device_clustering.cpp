#include "estimate/device_clustering.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace blur::collector {

DeviceClustering DeviceClustering::one_report_per_device(uint64_t reports) {
  DeviceClustering c;
  c.reports_ = reports;
  c.devices_ = reports;
  c.sum_squares_ = static_cast<double>(reports);
  c.max_reports_ = 1;
  return c;
}

DeviceClustering DeviceClustering::independent_given_values(uint64_t reports) {
  DeviceClustering c = one_report_per_device(reports);
  c.one_shot_ = true;
  return c;
}

DeviceClustering DeviceClustering::from_counts(uint64_t reports, const DeviceCounts& counted,
                                               uint64_t uncounted_cap) {
  DeviceClustering c;
  c.reports_ = reports;
  c.devices_ = counted.devices;
  const double n = static_cast<double>(reports);
  double squares = counted.sum_squares;
  double largest = static_cast<double>(counted.max_reports);
  if (counted.reports < reports) {
    // Each device behind the u uncounted reports sent at most `cap` of them,
    // so theirs add at most cap u to S2; a device may be in both parts, and
    // sqrt(S2) is a norm (Minkowski).
    c.uncounted_ = reports - counted.reports;
    const double u = static_cast<double>(c.uncounted_);
    c.uncounted_cap_ = std::clamp<uint64_t>(uncounted_cap, 1, c.uncounted_);
    const double cap = static_cast<double>(c.uncounted_cap_);
    const double root = std::sqrt(squares) + std::sqrt(cap * u);
    squares = root * root;
    largest += cap;
  }
  // Counts above `reports` are a superset of each device's reports here:
  // their S2 and max only overstate. Whatever the counts, 1 <= m_max <= n
  // and n <= S2 <= m_max n.
  c.max_reports_ = std::clamp(largest, 1.0, std::max(n, 1.0));
  c.sum_squares_ = std::clamp(squares, n, c.max_reports_ * n);
  return c;
}

DeviceClustering metric_clustering(const MetricConfig& metric, uint64_t reports,
                                   const DeviceCounts& counted, uint64_t buckets) {
  if (!needs_device_clustering(metric)) return DeviceClustering::independent_given_values(reports);
  const uint64_t limit = reports_per_bucket_limit(metric);
  const uint64_t cap = buckets > UINT64_MAX / limit ? UINT64_MAX : limit * buckets;
  return DeviceClustering::from_counts(reports, counted, cap);
}

double DeviceClustering::design_effect() const {
  return reports_ == 0 ? 1.0 : sum_squares_ / static_cast<double>(reports_);
}

double DeviceClustering::variance(double independent, double floor, double ceiling) const {
  if (reports_ == 0 || max_reports_ <= 1) return independent;  // the textbook case, unchanged
  const double n = static_cast<double>(reports_);
  const double excess = std::max(independent - n * floor, 0.0);
  double spread = max_reports_ * excess;
  if (ceiling > floor && std::isfinite(ceiling)) {
    spread = std::min(spread, sum_squares_ * (ceiling - floor));
  }
  return floor * sum_squares_ + spread;
}

namespace {

// 1204 -> "1,204".
std::string grouped(uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

}  // namespace

std::string describe_variance(const DeviceClustering& c) {
  if (c.one_shot()) return "independent given the devices' values (one-shot reports)";
  if (c.max_reports() <= 1) return "independent reports (one per device)";
  char effect[32];
  std::snprintf(effect, sizeof effect, "%.1f", c.design_effect());
  std::string text = std::string("device-clustered (design effect ") + effect + " over " +
                     grouped(c.devices()) + (c.devices() == 1 ? " device" : " devices");
  if (c.uncounted_reports() != 0) {
    text += "; " + grouped(c.uncounted_reports()) +
            " reports without device counts (pruned), up to " + grouped(c.uncounted_cap()) +
            " per device";
  }
  return text + ")";
}

}  // namespace blur::collector
