#include "clopper_pearson.h"

#include <cmath>
#include <limits>

namespace blur::sim {

namespace {

// The continued fraction of I_x(a, b) (modified Lentz), for x < (a + 1) / (a + b + 2).
double beta_fraction(double a, double b, double x) {
  constexpr double kTiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1 / d;
  double result = d;
  for (int m = 1; m <= 100000; ++m) {
    const double m2 = 2.0 * m;
    double numerator = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1 + numerator * d;
    c = 1 + numerator / c;
    if (std::fabs(d) < kTiny) d = kTiny;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    result *= d * c;
    numerator = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1 + numerator * d;
    c = 1 + numerator / c;
    if (std::fabs(d) < kTiny) d = kTiny;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double step = d * c;
    result *= step;
    if (std::fabs(step - 1) < 1e-15) break;
  }
  return result;
}

// The p in (0, 1) where the increasing function f(p) crosses `target`.
template <typename F>
double solve(F f, double target) {
  double low = 0, high = 1;
  for (int i = 0; i < 200; ++i) {
    const double middle = (low + high) / 2;
    (f(middle) < target ? low : high) = middle;
  }
  return (low + high) / 2;
}

}  // namespace

double regularized_incomplete_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double log_front =
      std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x);
  if (x < (a + 1) / (a + b + 2)) return std::exp(log_front) * beta_fraction(a, b, x) / a;
  return 1 - std::exp(log_front) * beta_fraction(b, a, 1 - x) / b;
}

// P(Binomial(n, p) >= k) = I_p(k, n - k + 1), increasing in p.
double clopper_pearson_lower(uint64_t k, uint64_t n, double alpha) {
  if (k == 0) return 0;
  const double a = static_cast<double>(k), b = static_cast<double>(n - k + 1);
  return solve([&](double p) { return regularized_incomplete_beta(a, b, p); }, alpha);
}

// P(Binomial(n, p) <= k) = 1 - I_p(k + 1, n - k), decreasing in p.
double clopper_pearson_upper(uint64_t k, uint64_t n, double alpha) {
  if (k >= n) return 1;
  const double a = static_cast<double>(k + 1), b = static_cast<double>(n - k);
  return solve([&](double p) { return regularized_incomplete_beta(a, b, p); }, 1 - alpha);
}

LossBound epsilon_lower_bound(uint64_t k1, uint64_t n1, uint64_t k0, uint64_t n0, double alpha) {
  LossBound bound{clopper_pearson_lower(k1, n1, alpha), clopper_pearson_upper(k0, n0, alpha), 0};
  bound.epsilon_lower = bound.tpr_low > 0 ? std::log(bound.tpr_low / bound.fpr_high)
                                          : -std::numeric_limits<double>::infinity();
  return bound;
}

}  // namespace blur::sim
