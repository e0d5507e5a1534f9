// Privacy loss distribution (PLD) accountant for the Poisson-subsampled
// Gaussian mechanism (DP-SGD), beside the RDP accountant: a tighter epsilon
// for the same noise. docs/math.md §6.7.
//
// Adjacency: add-or-remove one unit, as dp_accounting's PLDAccountant
// (NeighborRel.ADD_OR_REMOVE_ONE) and the RDP accountant. Like
// dp_accounting, both directions are accounted separately:
//   remove: P = (1-q) N(0, s^2) + q N(-1, s^2) against Q = N(0, s^2),
//   add:    P = N(0, s^2) against Q = (1-q) N(0, s^2) + q N(1, s^2),
// (s the noise multiplier, sensitivity 1) each composed over all steps, and
// the worse of the two is reported (the larger delta at an epsilon, the
// larger epsilon at a delta).
//
// Method: each step's PLD is discretized on the grid {i * width} with the
// pessimistic "connect the dots" rule (Doroshenko, Ghazi, Kamath, Kumar,
// Manurangsi, PETS 2022): the discrete PLD's hockey-stick curve equals the
// exact one (Gaussian CDFs in closed form) at every grid point and is the
// chord between them, so it is an upper bound everywhere. The T-step
// composition is the T-fold self-convolution, computed by a radix-2 FFT
// (power T of each Fourier coefficient) on a window of the summed losses
// chosen by a Chernoff bound; the mass the window may lose (at most
// tail_mass) is added to delta. Every result is an upper bound on the exact
// delta (or epsilon) up to floating-point rounding.
//
// Errors are values: the functions validate their inputs, never throw, and
// say what was wrong.
#ifndef BLUR_COLLECTOR_PRIVACY_PLD_ACCOUNTANT_H
#define BLUR_COLLECTOR_PRIVACY_PLD_ACCOUNTANT_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace blur::trainer {

struct PldOptions {
  double grid_width = 1e-4;  // the loss grid (dp_accounting's default)
  double tail_mass = 1e-15;  // the window's allowance, added to delta
  // The largest FFT (complex doubles, 16 bytes each); a composition that
  // needs more is refused (use a coarser grid).
  std::size_t max_fft_size = std::size_t{1} << 22;
};

enum class PldErrorCode { kNone, kInvalidArgument, kTooLarge };

// A value or an error.
struct PldValue {
  double value = 0;
  PldErrorCode code = PldErrorCode::kNone;
  std::string error;  // empty when ok()
  bool ok() const { return code == PldErrorCode::kNone; }
  explicit operator bool() const { return ok(); }
};

// Success or an error.
struct PldStatus {
  PldErrorCode code = PldErrorCode::kNone;
  std::string error;
  bool ok() const { return code == PldErrorCode::kNone; }
  explicit operator bool() const { return ok(); }
};

class PldAccountant {
 public:
  explicit PldAccountant(PldOptions options = {});

  // A phase: `steps` steps at sampling rate q in [0, 1] with noise
  // multiplier sigma >= 0 (sigma = 0 with q > 0 is not private: epsilon
  // becomes infinite). Refused (and nothing added) outside those ranges or
  // if the options are invalid.
  PldStatus add(double q, double sigma, uint64_t steps);

  // The smallest epsilon >= 0 with delta(epsilon) <= delta, delta in (0, 1);
  // +infinity if no finite epsilon reaches it.
  PldValue epsilon(double delta) const;
  // The hockey-stick divergence at epsilon (finite, >= 0).
  PldValue delta(double epsilon) const;

 private:
  struct Phase {
    double q, sigma;
    uint64_t steps;
  };
  // One direction's composed PLD: mass[k] at loss (first + k) * width.
  struct Composed {
    int64_t first = 0;
    std::vector<double> mass;
    double infinity_mass = 0;  // infinite losses plus the window's allowance
  };
  PldStatus compose() const;
  PldOptions options_;
  std::vector<Phase> phases_;
  bool non_private_ = false;
  mutable bool composed_ = false;
  mutable PldStatus compose_status_;
  mutable Composed add_, remove_;
  static double delta_of(const Composed& c, double width, double epsilon);
  static double epsilon_of(const Composed& c, double width, double delta);
};

// One phase, one question.
PldValue pld_epsilon(double q, double sigma, uint64_t steps, double delta,
                     const PldOptions& options = {});
PldValue pld_delta(double q, double sigma, uint64_t steps, double epsilon,
                   const PldOptions& options = {});

// The exact delta(epsilon) of the Gaussian mechanism with noise multiplier
// sigma (Balle and Wang 2018), mu = 1/sigma:
//   Phi(mu/2 - epsilon/mu) - e^epsilon Phi(-mu/2 - epsilon/mu).
double gaussian_mechanism_delta(double sigma, double epsilon);

// For the trainer's summary ("epsilon (RDP) = x, epsilon (PLD) = y"): both
// accountants over the same phases at delta: rdp_epsilon from the RDP
// accountant (default orders, improved conversion), pld_epsilon from this
// one; each a value or its error.
struct AccountingSummary {
  PldValue rdp_epsilon;
  PldValue pld_epsilon;
};
struct AccountingPhase {
  double q, sigma;
  uint64_t steps;
};
AccountingSummary summarize_privacy(const std::vector<AccountingPhase>& phases, double delta,
                                    const PldOptions& options = {});

}  // namespace blur::trainer

#endif  // BLUR_COLLECTOR_PRIVACY_PLD_ACCOUNTANT_H
