#include "estimate/numeric_summary.h"

#include <cmath>

#include "estimate/frequency_oracle.h"
#include "estimate/grid_histogram.h"

namespace blur::collector {

void NumericSummary::add(int64_t value, uint64_t multiplicity) {
  reports_ += multiplicity;
  sum_ += static_cast<__int128>(value) * multiplicity;
  sum_squares_ += static_cast<__int128>(value) * value * multiplicity;
  histogram_[value] += multiplicity;
}

double NumericSummary::mean() const {
  return reports_ == 0 ? 0.0 : static_cast<double>(sum_) / static_cast<double>(reports_);
}

double NumericSummary::sample_variance() const {
  if (reports_ < 2) return 0.0;
  // n * sum(x^2) - (sum x)^2 exactly, then one division.
  const __int128 n = reports_;
  const __int128 scaled = n * sum_squares_ - sum_ * sum_;
  return static_cast<double>(scaled) / (static_cast<double>(reports_) * (reports_ - 1.0));
}

double discrete_laplace_noise_variance(const MetricConfig& metric) {
  const double r = std::exp(-(metric.epsilon_micros / 1e6) / (metric.domain_size - 1.0));
  return 2 * r / ((1 - r) * (1 - r));
}

nlohmann::json numeric_estimate_json(const MetricConfig& metric, const NumericSummary& summary,
                                     PostProcessing post) {
  nlohmann::json out;
  out["metric_id"] = metric.id;
  out["mechanism"] = mechanism_name(metric.mechanism);
  out["epsilon"] = metric.epsilon_micros / 1e6;
  out["domain_size"] = metric.domain_size;
  out["grid_step"] = 1;
  out["n"] = summary.reports();
  out["estimates"] = nlohmann::json::array();
  // Both estimators are affine in the reports: mean = offset + scale * report_mean.
  double offset = 0, scale = 1;
  if (metric.mechanism == MechanismId::kOneBitMean) {
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
  const double report_variance = metric.mechanism == MechanismId::kDiscreteLaplace
                                     ? discrete_laplace_noise_variance(metric)
                                     : summary.sample_variance();
  const double stderr_mean = scale * std::sqrt(report_variance / summary.reports());
  out["estimates"].push_back({{"value", "mean"},
                              {"estimate", mean},
                              {"stderr", stderr_mean},
                              {"ci95", {mean - kZ95 * stderr_mean, mean + kZ95 * stderr_mean}}});
  if (metric.mechanism == MechanismId::kDiscreteLaplace && metric.domain_size <= kMaxHistogramGrid) {
    const std::map<int64_t, double> outputs(summary.histogram().begin(), summary.histogram().end());
    const double r = std::exp(-(metric.epsilon_micros / 1e6) / (metric.domain_size - 1.0));
    std::vector<double> unbiased;
    nlohmann::json bins = nlohmann::json::array();
    const auto histogram = discrete_laplace_histogram(outputs, r, metric.domain_size);
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

}  // namespace blur::collector
