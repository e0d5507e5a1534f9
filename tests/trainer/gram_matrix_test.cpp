// The AVX2+FMA Gram kernel (gram_matrix.h) against a double-precision
// reference and the portable (OpenBLAS SYRK) path: every lower-triangle
// entry agrees to float rounding, over shapes that exercise the 8-row tail,
// the 4 x 2 column tiles' edges (1 to 21 columns) and a column stride
// larger than the rows; the upper triangle is never written. On a CPU
// without AVX2+FMA the kernel is absent and the test says so and checks the
// portable path only.
#include "trainer/model/gram_matrix.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace {

using blur::trainer::gram_lower;
using blur::trainer::gram_lower_avx2;
using blur::trainer::gram_lower_portable;

constexpr double kUntouched = -12345.0;

TEST(GramMatrix, KernelsMatchTheDoubleReference) {
  std::mt19937 rng(11);
  std::normal_distribution<float> value(0.0f, 1.0f);
  bool ran_avx2 = false;
  for (long rows : {1L, 7L, 8L, 9L, 128L, 5000L, 5003L}) {
    for (long cols : {1L, 2L, 3L, 4L, 5L, 8L, 19L, 21L}) {
      const long ld = rows + 3;
      std::vector<float> x(static_cast<size_t>(ld * cols));
      for (auto& v : x) v = value(rng);
      const auto size = static_cast<size_t>(cols * cols);
      std::vector<double> avx2(size, kUntouched), portable(size, kUntouched),
          chosen(size, kUntouched);
      const bool has_avx2 = gram_lower_avx2(x.data(), rows, cols, ld, avx2.data());
      ran_avx2 |= has_avx2;
      gram_lower_portable(x.data(), rows, cols, ld, portable.data());
      gram_lower(x.data(), rows, cols, ld, chosen.data());
      EXPECT_EQ(chosen, has_avx2 ? avx2 : portable) << "the dispatcher's choice";
      for (long t = 0; t < cols; ++t) {
        for (long s = 0; s < cols; ++s) {
          const auto k = static_cast<size_t>(s + t * cols);
          if (s < t) {
            EXPECT_EQ(portable[k], kUntouched) << "upper triangle written";
            if (has_avx2) {
              EXPECT_EQ(avx2[k], kUntouched) << "upper triangle written";
            }
            continue;
          }
          double exact = 0, scale = 0;
          for (long r = 0; r < rows; ++r) {
            const double a = x[static_cast<size_t>(r + s * ld)];
            const double b = x[static_cast<size_t>(r + t * ld)];
            exact += a * b;
            scale += std::fabs(a * b);
          }
          // Float products summed in float: relative 1e-6 of sum |a b|
          // (a few float ulps per 8-lane partial sum).
          const double tolerance = 1e-6 * scale + 1e-12;
          EXPECT_NEAR(portable[k], exact, tolerance) << rows << " x " << cols << " " << s << "," << t;
          if (has_avx2) {
            EXPECT_NEAR(avx2[k], exact, tolerance) << rows << " x " << cols << " " << s << "," << t;
          }
        }
      }
    }
  }
  if (!ran_avx2) std::printf("this CPU has no AVX2+FMA: checked the portable kernel only\n");
}

}  // namespace
