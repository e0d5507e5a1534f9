#include "trainer/accountants/rdp_accountant.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace blur::trainer {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double log_add(double a, double b) {
  if (a == -kInf) return b;
  if (b == -kInf) return a;
  const double high = std::max(a, b);
  return high + std::log1p(std::exp(std::min(a, b) - high));
}

// ln C(alpha, i) of |C| for real alpha (lgamma returns ln|Gamma|).
double log_binomial(double alpha, double i) {
  return std::lgamma(alpha + 1) - std::lgamma(i + 1) - std::lgamma(alpha - i + 1);
}

// ln erfc(x); for x > 20 the asymptotic series (std::erfc underflows
// near 26): erfc(x) ~ e^{-x^2} / (x sqrt(pi)) (1 - 1/(2x^2) + 3/(4x^4) - 15/(8x^6)).
double log_erfc(double x) {
  if (x < 20) return std::log(std::erfc(x));
  const double r = 1 / (x * x);
  return -x * x - std::log(x) - 0.5 * std::log(M_PI) +
         std::log1p(-0.5 * r + 0.75 * r * r - 1.875 * r * r * r);
}

double log_a_integer(double q, double sigma, int alpha) {
  double log_a = -kInf;
  for (int i = 0; i <= alpha; ++i) {
    const double term = log_binomial(alpha, i) + i * std::log(q) + (alpha - i) * std::log1p(-q) +
                        (static_cast<double>(i) * i - i) / (2 * sigma * sigma);
    log_a = log_add(log_a, term);
  }
  return log_a;
}

double log_a_fractional(double q, double sigma, double alpha) {
  double a0 = -kInf, a1 = -kInf;
  const double z0 = sigma * sigma * std::log(1 / q - 1) + 0.5;
  const double root2_sigma = std::sqrt(2.0) * sigma;
  double previous = kInf;
  for (int i = 0; i < 100000; ++i) {
    const double j = alpha - i;
    const double coefficient = log_binomial(alpha, i);
    const double s0 = coefficient + i * std::log(q) + j * std::log1p(-q) +
                      (static_cast<double>(i) * i - i) / (2 * sigma * sigma) +
                      log_erfc((i - z0) / root2_sigma) - std::log(2.0);
    const double s1 = coefficient + j * std::log(q) + i * std::log1p(-q) +
                      (j * j - j) / (2 * sigma * sigma) + log_erfc((z0 - j) / root2_sigma) -
                      std::log(2.0);
    a0 = log_add(a0, s0);
    a1 = log_add(a1, s1);
    const double largest = std::max(s0, s1);
    if (largest < std::max(a0, a1) - 30 && largest < previous) break;
    previous = largest;
  }
  return log_add(a0, a1);
}

}  // namespace

double rdp_sampled_gaussian(double q, double sigma, double alpha) {
  if (!(q >= 0 && q <= 1) || !(sigma >= 0) || !(alpha > 1)) {
    throw std::invalid_argument("rdp: need q in [0, 1], sigma >= 0, alpha > 1");
  }
  if (q == 0) return 0;
  if (sigma == 0 || std::isinf(alpha)) return kInf;
  if (q == 1) return alpha / (2 * sigma * sigma);
  const double log_a = alpha == std::floor(alpha) && alpha < 1e6
                           ? log_a_integer(q, sigma, static_cast<int>(alpha))
                           : log_a_fractional(q, sigma, alpha);
  return log_a / (alpha - 1);
}

const std::vector<double>& default_rdp_orders() {
  static const std::vector<double> orders = [] {
    std::vector<double> o;
    for (int x = 1; x <= 99; ++x) o.push_back(1 + x / 10.0);
    for (int x = 11; x <= 63; ++x) o.push_back(x);
    for (double x : {128.0, 256.0, 512.0, 1024.0}) o.push_back(x);
    return o;
  }();
  return orders;
}

RdpAccountant::RdpAccountant() : RdpAccountant(default_rdp_orders()) {}

RdpAccountant::RdpAccountant(std::vector<double> orders)
    : orders_(std::move(orders)), rdp_(orders_.size(), 0.0) {
  if (orders_.empty()) throw std::invalid_argument("rdp: no orders");
  for (double a : orders_) {
    if (!(a > 1)) throw std::invalid_argument("rdp: orders must be > 1");
  }
}

void RdpAccountant::add(double q, double sigma, uint64_t steps) {
  if (steps == 0) return;
  for (size_t k = 0; k < orders_.size(); ++k) {
    rdp_[k] += static_cast<double>(steps) * rdp_sampled_gaussian(q, sigma, orders_[k]);
  }
}

EpsilonAtDelta epsilon_from_rdp(const std::vector<double>& orders, const std::vector<double>& rdp,
                                double delta, RdpConversion conversion) {
  if (!(delta > 0 && delta < 1)) throw std::invalid_argument("rdp: delta must be in (0, 1)");
  if (orders.empty() || orders.size() != rdp.size()) {
    throw std::invalid_argument("rdp: one RDP value per order");
  }
  // Zero RDP at every order (nothing sampled): no loss at all.
  if (std::all_of(rdp.begin(), rdp.end(), [](double r) { return r == 0; })) {
    return EpsilonAtDelta{0, orders.front()};
  }
  EpsilonAtDelta best{kInf, orders.front()};
  for (size_t k = 0; k < orders.size(); ++k) {
    const double a = orders[k];
    const double eps =
        conversion == RdpConversion::kClassic
            ? rdp[k] - std::log(delta) / (a - 1)
            : rdp[k] + std::log1p(-1 / a) - (std::log(delta) + std::log(a)) / (a - 1);
    if (eps < best.epsilon) best = EpsilonAtDelta{std::max(0.0, eps), a};
  }
  return best;
}

EpsilonAtDelta RdpAccountant::epsilon(double delta, RdpConversion conversion) const {
  return epsilon_from_rdp(orders_, rdp_, delta, conversion);
}

double calibrate_noise_multiplier(const std::function<double(double)>& epsilon_of,
                                  double target_epsilon) {
  if (!(target_epsilon > 0)) throw std::invalid_argument("calibrate: target epsilon must be > 0");
  double high = 1;
  while (epsilon_of(high) > target_epsilon) {
    high *= 2;
    if (high > 1e4) throw std::invalid_argument("calibrate: no noise multiplier <= 1e4 reaches it");
  }
  double low = high / 2;
  if (epsilon_of(low) <= target_epsilon) low = 0;
  while (high - low > 1e-6 * high) {
    const double middle = (low + high) / 2;
    if (epsilon_of(middle) <= target_epsilon) {
      high = middle;
    } else {
      low = middle;
    }
  }
  return high;
}

}  // namespace blur::trainer
