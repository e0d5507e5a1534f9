#include "estimate/frequency_oracle.h"

#include <algorithm>
#include <cmath>


namespace blur::collector {

CountEstimate estimate_count(uint64_t reports, uint64_t support, OracleParams params,
                             double others_squared, const DeviceClustering& clustering) {
  const double n = static_cast<double>(reports);
  const double gap = params.p - params.q;
  const double count = (static_cast<double>(support) / params.weight - n * params.q) / gap;
  const double plug_in = std::clamp(count, 0.0, n);
  // Per report: q(1-q) for a report of another value, p(1-p) for one of v
  // (their difference is (p-q)(1-p-q)), over (p-q)^2 h.
  const double scale = gap * gap * params.weight;
  const double other = params.q * (1 - params.q) / scale, own = params.p * (1 - params.p) / scale;
  const double independent =
      (n * params.q * (1 - params.q) / (gap * gap) + plug_in * (1 - params.p - params.q) / gap) /
      params.weight;
  const double variance =
      clustering.variance(independent, std::min(other, own), std::max(other, own)) +
      params.collision_coefficient * others_squared;
  const double std_error = std::sqrt(std::max(variance, 0.0));
  return CountEstimate{count, std_error, count - kZ95 * std_error, count + kZ95 * std_error};
}

CountEstimate estimate_count(uint64_t reports, uint64_t support, OracleParams params,
                             double others_squared) {
  return estimate_count(reports, support, params, others_squared,
                        DeviceClustering::one_report_per_device(reports));
}

}  // namespace blur::collector
