#include "trainer/audit/epsilon_lower_bound.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace blur::trainer {

namespace {

// P[Binomial(n, p) = k] for k = 0..n, in log space then exponentiated.
std::vector<double> binomial_pmf(uint64_t n, double p) {
  std::vector<double> pmf(n + 1, 0.0);
  const double lp = std::log(p), lq = std::log1p(-p);
  for (uint64_t k = 0; k <= n; ++k) {
    const double log_choose = std::lgamma(double(n) + 1) - std::lgamma(double(k) + 1) -
                              std::lgamma(double(n - k) + 1);
    pmf[k] = std::exp(log_choose + double(k) * lp + double(n - k) * lq);
  }
  return pmf;
}

}  // namespace

double one_run_audit_p_value(uint64_t m, uint64_t r, uint64_t v, double epsilon, double delta) {
  if (!(v <= r && r <= m) || !(epsilon >= 0) || !(delta >= 0 && delta <= 1)) {
    throw std::invalid_argument("one_run_audit_p_value: need correct <= guesses <= canaries");
  }
  const double p = 1 / (1 + std::exp(-epsilon));  // randomized response's accuracy
  const std::vector<double> pmf = binomial_pmf(r, p);
  double beta = 0;
  for (uint64_t k = v; k <= r; ++k) beta += pmf[k];
  double alpha = 0, below = 0;  // below = P[v - i <= B < v]
  for (uint64_t i = 1; i <= v; ++i) {
    below += pmf[v - i];
    alpha = std::max(alpha, below / double(i));
  }
  return std::min(1.0, beta + alpha * delta * 2 * double(m));
}

double one_run_epsilon_lower_bound(uint64_t m, uint64_t r, uint64_t v, double delta,
                                   double confidence) {
  const double level = 1 - confidence;
  if (one_run_audit_p_value(m, r, v, 0, delta) >= level) return 0;
  double low = 0, high = 1;  // p(low) < level <= p(high)
  while (high < 50 && one_run_audit_p_value(m, r, v, high, delta) < level) high *= 2;
  if (high >= 50) return 50;
  while (high - low > 1e-6) {
    const double mid = 0.5 * (low + high);
    (one_run_audit_p_value(m, r, v, mid, delta) < level ? low : high) = mid;
  }
  return low;
}

}  // namespace blur::trainer
