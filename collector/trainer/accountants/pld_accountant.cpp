#include "trainer/accountants/pld_accountant.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <exception>
#include <limits>
#include <utility>

#include "trainer/accountants/rdp_accountant.h"

namespace blur::trainer {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Each step's losses are discretized between the losses at the noise's
// +-kTailSigmas standard deviations (a Gaussian tail of 7.6e-24 beyond);
// whatever lies past the top becomes infinite loss (pessimistic).
constexpr double kTailSigmas = 10;
// At most this many grid points for one step's PLD.
constexpr int64_t kMaxStepPoints = int64_t{1} << 21;

enum class Direction { kAdd, kRemove };

PldValue value_of(double v) { return PldValue{v, PldErrorCode::kNone, {}}; }
PldValue failure(PldErrorCode code, std::string message) {
  return PldValue{0, code, std::move(message)};
}
PldStatus status_of(PldErrorCode code, std::string message) {
  return PldStatus{code, std::move(message)};
}

double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// ln(a e^b + c) for a, c >= 0, without overflow.
double log_a_exp_b_plus_c(double a, double b, double c) {
  const double lb = std::log(a) + b;
  if (c == 0) return lb;
  const double lc = std::log(c);
  const double high = std::max(lb, lc);
  return high + std::log1p(std::exp(std::min(lb, lc) - high));
}

// The privacy loss ln(P(x)/Q(x)) of one step (decreasing in x).
double privacy_loss(Direction dir, double q, double sigma, double x) {
  const double s2 = sigma * sigma;
  if (dir == Direction::kRemove) {
    // ln((1-q) + q exp((-2x-1) / (2 s^2)))
    return log_a_exp_b_plus_c(q, (-2 * x - 1) / (2 * s2), 1 - q);
  }
  // -ln((1-q) + q exp((2x-1) / (2 s^2)))
  return -log_a_exp_b_plus_c(q, (2 * x - 1) / (2 * s2), 1 - q);
}

// The exact hockey-stick divergence of one step at epsilon (closed form:
// the set where the loss exceeds epsilon is x < x_epsilon).
double step_delta(Direction dir, double q, double sigma, double epsilon) {
  const double s2 = sigma * sigma;
  double delta;
  if (dir == Direction::kRemove) {
    const double excess = std::expm1(epsilon) + q;  // e^eps - (1 - q)
    if (!(excess > 0)) return -std::expm1(epsilon);  // eps <= ln(1-q): all of P counts
    const double x = -s2 * std::log(excess / q) - 0.5;
    delta = q * normal_cdf((x + 1) / sigma) - excess * normal_cdf(x / sigma);
  } else {
    const double excess = std::expm1(-epsilon) + q;  // e^-eps - (1 - q)
    if (!(excess > 0)) return 0;  // eps >= -ln(1-q): the loss never exceeds it
    const double x = s2 * std::log(excess / q) + 0.5;
    delta = std::exp(epsilon) * (excess * normal_cdf(x / sigma) - q * normal_cdf((x - 1) / sigma));
  }
  return std::clamp(delta, 0.0, 1.0);
}

struct StepPmf {
  int64_t first = 0;          // grid index of mass[0]
  std::vector<double> mass;   // finite losses
  double infinity_mass = 0;
};

// Connect the dots (Doroshenko et al. 2022, Algorithm 1, fixed gap d):
// with delta_i the exact divergence at eps_i = (first + i) d,
//   mass_1 = (1 - delta_1) + (delta_2 - delta_1) / (e^d - 1),
//   mass_i = ((delta_{i+1} - delta_i) - e^d (delta_i - delta_{i-1})) / (e^d - 1),
//   mass_n = (delta_n - delta_{n-1}) / (e^-d - 1),
//   infinity: delta_n.
StepPmf discretize(Direction dir, double q, double sigma, double width) {
  const double x_low = -kTailSigmas * sigma - (dir == Direction::kRemove ? 1.0 : 0.0);
  const double x_high = kTailSigmas * sigma;
  const double loss_high = privacy_loss(dir, q, sigma, x_low);
  const double loss_low = privacy_loss(dir, q, sigma, x_high);
  const int64_t low = static_cast<int64_t>(std::floor(loss_low / width));
  int64_t high = static_cast<int64_t>(std::ceil(loss_high / width));
  high = std::max(low, std::min(high, low + kMaxStepPoints - 1));
  const auto n = static_cast<size_t>(high - low + 1);
  std::vector<double> delta(n);
  for (size_t i = 0; i < n; ++i) {
    delta[i] = step_delta(dir, q, sigma, static_cast<double>(low + static_cast<int64_t>(i)) * width);
  }
  // Non-increasing (rounding may break it by an ulp).
  for (size_t i = 1; i < n; ++i) delta[i] = std::min(delta[i], delta[i - 1]);
  StepPmf pmf;
  pmf.first = low;
  pmf.mass.assign(n, 0.0);
  pmf.infinity_mass = delta[n - 1];
  if (n == 1) {
    pmf.mass[0] = 1 - delta[0];
    return pmf;
  }
  const double em1 = std::expm1(width);
  const double ed = std::exp(width);
  pmf.mass[0] = (1 - delta[0]) + (delta[1] - delta[0]) / em1;
  for (size_t i = 1; i + 1 < n; ++i) {
    pmf.mass[i] = ((delta[i + 1] - delta[i]) - ed * (delta[i] - delta[i - 1])) / em1;
  }
  pmf.mass[n - 1] = (delta[n - 1] - delta[n - 2]) / std::expm1(-width);
  for (double& m : pmf.mass) m = std::max(m, 0.0);  // rounding noise
  return pmf;
}

// ln E[e^{t L}] over the finite part (a sub-probability).
double log_mgf(const StepPmf& pmf, double width, double t) {
  double high = -kInfinity;
  for (size_t i = 0; i < pmf.mass.size(); ++i) {
    if (pmf.mass[i] > 0) {
      high = std::max(high, t * static_cast<double>(pmf.first + static_cast<int64_t>(i)) * width);
    }
  }
  if (high == -kInfinity) return -kInfinity;
  double sum = 0;
  for (size_t i = 0; i < pmf.mass.size(); ++i) {
    if (pmf.mass[i] > 0) {
      sum += pmf.mass[i] *
             std::exp(t * static_cast<double>(pmf.first + static_cast<int64_t>(i)) * width - high);
    }
  }
  return high + std::log(sum);
}

// In-place iterative radix-2 FFT; inverse without the 1/n.
void fft(std::vector<std::complex<double>>& a, bool inverse) {
  const size_t n = a.size();
  for (size_t i = 1, j = 0; i < n; ++i) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  // Twiddles computed directly (no recurrence): w_k = e^{-+2 pi i k / n}.
  std::vector<std::complex<double>> w(n / 2);
  const double sign = inverse ? 1.0 : -1.0;
  for (size_t k = 0; k < n / 2; ++k) {
    const double angle = sign * 2 * M_PI * static_cast<double>(k) / static_cast<double>(n);
    w[k] = {std::cos(angle), std::sin(angle)};
  }
  for (size_t len = 2; len <= n; len <<= 1) {
    const size_t stride = n / len;
    for (size_t i = 0; i < n; i += len) {
      for (size_t k = 0; k < len / 2; ++k) {
        const std::complex<double> u = a[i + k];
        const std::complex<double> v = a[i + k + len / 2] * w[k * stride];
        a[i + k] = u + v;
        a[i + k + len / 2] = u - v;
      }
    }
  }
}

std::complex<double> integer_power(std::complex<double> z, uint64_t power) {
  const double r = std::abs(z);
  if (r == 0) return 0;
  const double p = static_cast<double>(power);
  return std::polar(std::exp(p * std::log(r)), std::remainder(p * std::arg(z), 2 * M_PI));
}

}  // namespace

PldAccountant::PldAccountant(PldOptions options) : options_(options) {}

PldStatus PldAccountant::add(double q, double sigma, uint64_t steps) {
  if (!(options_.grid_width > 0 && options_.grid_width <= 1)) {
    return status_of(PldErrorCode::kInvalidArgument, "pld: grid width must be in (0, 1]");
  }
  if (!(options_.tail_mass > 0 && options_.tail_mass < 1e-3)) {
    return status_of(PldErrorCode::kInvalidArgument, "pld: tail mass must be in (0, 1e-3)");
  }
  if (options_.max_fft_size < 2) {
    return status_of(PldErrorCode::kInvalidArgument, "pld: max FFT size must be >= 2");
  }
  if (!(q >= 0 && q <= 1)) {
    return status_of(PldErrorCode::kInvalidArgument, "pld: sampling rate q must be in [0, 1]");
  }
  if (!(sigma >= 0 && std::isfinite(sigma))) {
    return status_of(PldErrorCode::kInvalidArgument,
                     "pld: noise multiplier sigma must be finite and >= 0");
  }
  if (steps == 0 || q == 0) return {};
  if (sigma == 0) {
    non_private_ = true;
    return {};
  }
  phases_.push_back(Phase{q, sigma, steps});
  composed_ = false;
  return {};
}

PldStatus PldAccountant::compose() const {
  if (composed_) return compose_status_;
  composed_ = true;
  compose_status_ = {};
  const double width = options_.grid_width;
  for (Direction dir : {Direction::kAdd, Direction::kRemove}) {
    Composed& out = dir == Direction::kAdd ? add_ : remove_;
    out = Composed{};
    if (phases_.empty()) {  // no loss at all: every mass at 0
      out.mass = {1.0};
      continue;
    }
    std::vector<StepPmf> pmfs;
    double finite_mass = 1;  // prod over steps of (1 - infinity mass)
    double hard_low = 0, hard_high = 0;
    for (const Phase& phase : phases_) {
      pmfs.push_back(discretize(dir, phase.q, phase.sigma, width));
      const StepPmf& p = pmfs.back();
      const double t = static_cast<double>(phase.steps);
      finite_mass *= std::pow(1 - p.infinity_mass, t);
      hard_low += t * static_cast<double>(p.first);
      hard_high += t * static_cast<double>(p.first + static_cast<int64_t>(p.mass.size()) - 1);
    }
    // Window [low, high] (grid indices) of the summed losses: the Chernoff
    // bound P(S > b) <= exp(sum_k T_k ln M_k(t) - t b) at t = 2^j,
    // j = -8..20, and the same for the lower tail, each side at most
    // tail_mass / 2.
    const double log_half_tail = std::log(options_.tail_mass / 2);
    double upper = hard_high * width, lower = hard_low * width;
    for (int j = -8; j <= 20; ++j) {
      const double t = std::ldexp(1.0, j);
      double up = 0, down = 0;
      for (size_t k = 0; k < pmfs.size(); ++k) {
        const double steps = static_cast<double>(phases_[k].steps);
        up += steps * log_mgf(pmfs[k], width, t);
        down += steps * log_mgf(pmfs[k], width, -t);
      }
      upper = std::min(upper, (up - log_half_tail) / t);
      lower = std::max(lower, -(down - log_half_tail) / t);
    }
    double allowance = 0;
    double low_index = hard_low, high_index = hard_high;
    if (std::floor(lower / width) > hard_low) {
      low_index = std::floor(lower / width);
      allowance += options_.tail_mass / 2;
    }
    if (std::ceil(upper / width) < hard_high) {
      high_index = std::ceil(upper / width);
      allowance += options_.tail_mass / 2;
    }
    const double span = high_index - low_index + 1;
    if (!(span <= static_cast<double>(options_.max_fft_size))) {
      compose_status_ = status_of(
          PldErrorCode::kTooLarge,
          "pld: the composed loss distribution needs " + std::to_string(static_cast<uint64_t>(span)) +
              " grid points, more than the largest FFT; use a coarser grid width");
      return compose_status_;
    }
    size_t n = 2;
    while (static_cast<double>(n) < span) n <<= 1;
    const auto low = static_cast<int64_t>(low_index);
    const auto modulo = [n](int64_t i) {
      const auto m = static_cast<int64_t>(n);
      return static_cast<size_t>(((i % m) + m) % m);
    };
    std::vector<std::complex<double>> total(n, 1.0), one(n);
    for (size_t k = 0; k < pmfs.size(); ++k) {
      std::fill(one.begin(), one.end(), 0.0);
      for (size_t i = 0; i < pmfs[k].mass.size(); ++i) {
        one[modulo(pmfs[k].first + static_cast<int64_t>(i))] += pmfs[k].mass[i];
      }
      fft(one, false);
      for (size_t i = 0; i < n; ++i) total[i] *= integer_power(one[i], phases_[k].steps);
    }
    fft(total, true);
    // Index m of the cyclic result is the summed loss low + ((m - low) mod n).
    out.first = low;
    out.mass.assign(n, 0.0);
    for (size_t m = 0; m < n; ++m) {
      const double v = total[m].real() / static_cast<double>(n);
      out.mass[modulo(static_cast<int64_t>(m) - low)] = std::max(v, 0.0);
    }
    out.infinity_mass = std::min(1.0, (1 - finite_mass) + allowance);
  }
  return compose_status_;
}

double PldAccountant::delta_of(const Composed& c, double width, double epsilon) {
  double delta = c.infinity_mass;
  for (size_t k = c.mass.size(); k-- > 0;) {
    const double loss = static_cast<double>(c.first + static_cast<int64_t>(k)) * width;
    if (loss <= epsilon) break;
    delta += -std::expm1(epsilon - loss) * c.mass[k];
  }
  return std::min(delta, 1.0);
}

double PldAccountant::epsilon_of(const Composed& c, double width, double delta) {
  if (c.infinity_mass >= delta) return kInfinity;
  // Scanning down: C = infinity mass + sum_{j >= k} mass_j and
  // D = sum_{j >= k} mass_j e^{l_k - l_j}; for eps in [l_{k-1}, l_k],
  // delta(eps) = C - e^{eps - l_k} D.
  double big_c = c.infinity_mass, big_d = 0;
  const double shrink = std::exp(-width);
  for (size_t k = c.mass.size(); k-- > 0;) {
    big_c += c.mass[k];
    big_d = c.mass[k] + shrink * big_d;
    const double loss = static_cast<double>(c.first + static_cast<int64_t>(k)) * width;
    if (big_d > 0 && (k == 0 || big_c - shrink * big_d >= delta)) {
      return std::max(0.0, loss + std::log((big_c - delta) / big_d));
    }
  }
  return 0;  // no mass at all below the top
}

PldValue PldAccountant::epsilon(double delta) const {
  if (!(delta > 0 && delta < 1)) {
    return failure(PldErrorCode::kInvalidArgument, "pld: delta must be in (0, 1)");
  }
  if (non_private_) return value_of(kInfinity);
  if (PldStatus s = compose(); !s) return failure(s.code, s.error);
  const double width = options_.grid_width;
  return value_of(std::max(epsilon_of(add_, width, delta), epsilon_of(remove_, width, delta)));
}

PldValue PldAccountant::delta(double epsilon) const {
  if (!(epsilon >= 0 && std::isfinite(epsilon))) {
    return failure(PldErrorCode::kInvalidArgument, "pld: epsilon must be finite and >= 0");
  }
  if (non_private_) return value_of(1.0);
  if (PldStatus s = compose(); !s) return failure(s.code, s.error);
  const double width = options_.grid_width;
  return value_of(std::max(delta_of(add_, width, epsilon), delta_of(remove_, width, epsilon)));
}

PldValue pld_epsilon(double q, double sigma, uint64_t steps, double delta,
                     const PldOptions& options) {
  PldAccountant accountant(options);
  if (PldStatus s = accountant.add(q, sigma, steps); !s) return failure(s.code, s.error);
  return accountant.epsilon(delta);
}

PldValue pld_delta(double q, double sigma, uint64_t steps, double epsilon,
                   const PldOptions& options) {
  PldAccountant accountant(options);
  if (PldStatus s = accountant.add(q, sigma, steps); !s) return failure(s.code, s.error);
  return accountant.delta(epsilon);
}

double gaussian_mechanism_delta(double sigma, double epsilon) {
  const double mu = 1 / sigma;
  return normal_cdf(mu / 2 - epsilon / mu) - std::exp(epsilon) * normal_cdf(-mu / 2 - epsilon / mu);
}

AccountingSummary summarize_privacy(const std::vector<AccountingPhase>& phases, double delta,
                                    const PldOptions& options) {
  AccountingSummary summary;
  try {
    RdpAccountant rdp;
    for (const AccountingPhase& p : phases) rdp.add(p.q, p.sigma, p.steps);
    summary.rdp_epsilon = value_of(rdp.epsilon(delta).epsilon);
  } catch (const std::exception& e) {
    summary.rdp_epsilon = failure(PldErrorCode::kInvalidArgument, e.what());
  }
  PldAccountant pld(options);
  for (const AccountingPhase& p : phases) {
    if (PldStatus s = pld.add(p.q, p.sigma, p.steps); !s) {
      summary.pld_epsilon = failure(s.code, s.error);
      return summary;
    }
  }
  summary.pld_epsilon = pld.epsilon(delta);
  return summary;
}

}  // namespace blur::trainer
