#include "aggregate/numeric_summary.h"

#include <algorithm>
#include <cmath>


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

}  // namespace blur::collector
