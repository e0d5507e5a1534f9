#include "estimate/numeric_summary.h"

#include <algorithm>
#include <cmath>

#include "estimate/frequency_oracle.h"
#include "estimate/grid_histogram.h"

namespace blur::collector {

namespace {

using u128 = unsigned __int128;
constexpr u128 kU128Max = ~u128{0};
constexpr __int128 kI128Max = static_cast<__int128>(kU128Max >> 1);
constexpr __int128 kI128Min = -kI128Max - 1;

// a * b, false if it does not fit.
bool multiply(u128 a, u128 b, u128* product) {
  if (a != 0 && b > kU128Max / a) return false;
  *product = a * b;
  return true;
}

u128 magnitude(__int128 v) { return v < 0 ? u128{0} - static_cast<u128>(v) : static_cast<u128>(v); }

}  // namespace

void NumericSummary::add(int64_t value, uint64_t multiplicity) {
  reports_ += multiplicity;
  histogram_[value] += multiplicity;
  // |value * multiplicity| < 2^63 * 2^64 = 2^127: the product fits; the sum may not.
  const __int128 term = static_cast<__int128>(value) * multiplicity;
  if (sum_exact_ && ((term > 0 && sum_ > kI128Max - term) || (term < 0 && sum_ < kI128Min - term))) {
    sum_exact_ = false;
  }
  if (sum_exact_) sum_ += term;
  const u128 square = magnitude(value) * magnitude(value);  // <= 2^126
  u128 squares = 0;
  if (squares_exact_ && (!multiply(square, multiplicity, &squares) ||
                         sum_squares_ > kU128Max - squares)) {
    squares_exact_ = false;
  }
  if (squares_exact_) sum_squares_ += squares;
}

long double NumericSummary::wide_mean() const {
  if (reports_ == 0) return 0.0L;
  if (sum_exact_) return static_cast<long double>(sum_) / reports_;
  long double sum = 0;
  for (const auto& [value, count] : histogram_) sum += static_cast<long double>(value) * count;
  return sum / reports_;
}

double NumericSummary::mean() const { return static_cast<double>(wide_mean()); }

double NumericSummary::sample_variance() const {
  if (reports_ < 2) return 0.0;
  const double denominator = static_cast<double>(reports_) * (reports_ - 1.0);
  // n * sum(x^2) - (sum x)^2 exactly, then one division, when it fits
  // (it is >= 0 by Cauchy-Schwarz, unless n wrapped around: stored
  // multiplicities may be anything).
  u128 scaled = 0, square_of_sum = 0;
  if (sum_exact_ && squares_exact_ && multiply(reports_, sum_squares_, &scaled) &&
      multiply(magnitude(sum_), magnitude(sum_), &square_of_sum) && scaled >= square_of_sum) {
    return static_cast<double>(scaled - square_of_sum) / denominator;
  }
  // Else two passes over the histogram.
  const long double average = wide_mean();
  long double squares = 0;
  for (const auto& [value, count] : histogram_) {
    const long double d = static_cast<long double>(value) - average;
    squares += d * d * count;
  }
  return static_cast<double>(squares / (reports_ - 1.0L));
}

double discrete_laplace_noise_variance(const MetricConfig& metric) {
  const double r = std::exp(-(metric.epsilon_micros / 1e6) / (metric.domain_size - 1.0));
  return 2 * r / ((1 - r) * (1 - r));
}

nlohmann::json numeric_estimate_json(const MetricConfig& metric, const NumericSummary& summary,
                                     const DeviceClustering& clustering, PostProcessing post) {
  nlohmann::json out;
  out["metric_id"] = metric.id;
  out["mechanism"] = mechanism_name(metric.mechanism);
  out["epsilon"] = metric.epsilon_micros / 1e6;
  if (metric.longitudinal_epsilon_micros != 0) {
    out["longitudinal_epsilon"] = metric.longitudinal_epsilon_micros / 1e6;
  }
  out["domain_size"] = metric.domain_size;
  out["grid_step"] = 1;
  out["n"] = summary.reports();
  out["estimates"] = nlohmann::json::array();
  // Both estimators are affine in the reports: mean = offset + scale * report_mean.
  double offset = 0, scale = 1;
  if (metric.mechanism == MechanismId::kOneBitMean && metric.longitudinal_epsilon_micros != 0) {
    // Memoized (memoized_mean.h): the bit b at the longitudinal epsilon, sent
    // flipped with gamma = 1 / (e^eta + 1): E[sent] = gamma + (1 - 2 gamma) E[b].
    const double e = std::exp(metric.longitudinal_epsilon_micros / 1e6);
    const double gamma = 1.0 / (std::exp(metric.epsilon_micros / 1e6) + 1.0);
    scale = (metric.domain_size - 1.0) * (e + 1) / ((e - 1) * (1 - 2 * gamma));
    offset = -(metric.domain_size - 1.0) / (e - 1) - scale * gamma;
  } else if (metric.mechanism == MechanismId::kOneBitMean) {
    const double e = std::exp(metric.epsilon_micros / 1e6);
    scale = (metric.domain_size - 1.0) * (e + 1) / (e - 1);
    offset = -(metric.domain_size - 1.0) / (e - 1);
  } else {
    out["noise_variance"] = discrete_laplace_noise_variance(metric);
  }
  if (summary.reports() == 0) return out;
  const double mean = offset + scale * summary.mean();
  // Discrete Laplace: the error of the mean is the mean of the noise, whose
  // variance is known exactly (conditional on the devices' values, as for
  // the frequency oracles). 1BitMean: the bits' sample variance, which
  // bounds the conditional variance sum p_i (1 - p_i) / n^2 from above.
  // Both as the variance of the sum of the n reports, then clustered.
  const double n = static_cast<double>(summary.reports());
  double floor = 0, ceiling = 0, independent = 0;
  if (metric.mechanism == MechanismId::kDiscreteLaplace) {
    floor = ceiling = discrete_laplace_noise_variance(metric);
    independent = n * floor;
  } else {
    const double e = std::exp(metric.epsilon_micros / 1e6);
    floor = e / ((e + 1) * (e + 1));  // p (1 - p) at either end of the range
    ceiling = 0.25;
    independent = n * summary.sample_variance();
  }
  const double stderr_mean =
      scale * std::sqrt(std::max(clustering.variance(independent, floor, ceiling), 0.0)) / n;
  out["estimates"].push_back({{"value", "mean"},
                              {"estimate", mean},
                              {"stderr", stderr_mean},
                              {"ci95", {mean - kZ95 * stderr_mean, mean + kZ95 * stderr_mean}}});
  if (metric.mechanism == MechanismId::kDiscreteLaplace && metric.domain_size <= kMaxHistogramGrid) {
    const std::map<int64_t, double> outputs(summary.histogram().begin(), summary.histogram().end());
    const double r = std::exp(-(metric.epsilon_micros / 1e6) / (metric.domain_size - 1.0));
    std::vector<double> unbiased;
    nlohmann::json bins = nlohmann::json::array();
    const auto histogram = discrete_laplace_histogram(outputs, r, metric.domain_size, clustering);
    for (uint32_t x = 0; x < histogram.size(); ++x) {
      const CountEstimate& e = histogram[x];
      unbiased.push_back(e.count);
      bins.push_back({{"value", x},
                      {"estimate", e.count},
                      {"stderr", e.std_error},
                      {"ci95", {e.ci95_low, e.ci95_high}}});
    }
    if (post == PostProcessing::kNormSub) {
      add_norm_sub(unbiased, static_cast<double>(summary.reports()), &bins, &out);
    }
    out["histogram"] = std::move(bins);
  }
  return out;
}

nlohmann::json numeric_estimate_json(const MetricConfig& metric, const NumericSummary& summary,
                                     PostProcessing post) {
  return numeric_estimate_json(
      metric, summary, DeviceClustering::one_report_per_device(summary.reports()), post);
}

}  // namespace blur::collector
