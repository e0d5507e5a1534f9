// The AVX2+FMA softmax cross-entropy kernel against the portable one (and
// the double one, the reference): the loss and every gradient entry agree
// to float rounding, over sizes that exercise the 8-lane tail, logits far
// apart (exps that underflow), and the target anywhere. On a CPU without
// AVX2 the kernel is absent and the test says so and checks the portable
// path only.
#include "trainer/model/softmax_cross_entropy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace {

using blur::trainer::softmax_cross_entropy_avx2;
using blur::trainer::softmax_cross_entropy_portable;

TEST(SoftmaxCrossEntropy, VectorizedKernelMatchesTheReference) {
  std::mt19937 rng(5);
  bool ran_avx2 = false;
  for (int32_t size : {1, 7, 8, 9, 31, 5000, 5003}) {
    for (float spread : {0.1f, 5.0f, 60.0f}) {
      std::normal_distribution<float> logit(0.0f, spread);
      std::vector<float> z(static_cast<size_t>(size)), bias(z.size());
      for (auto& v : z) v = logit(rng);
      for (auto& v : bias) v = logit(rng) * 0.1f;
      const int32_t target = static_cast<int32_t>(rng() % static_cast<uint32_t>(size));
      const float steps = 3;
      std::vector<double> reference(z.begin(), z.end()), reference_bias(bias.begin(), bias.end());
      const double expected = softmax_cross_entropy_portable(
          reference.data(), reference_bias.data(), size, target, 3.0, true);
      std::vector<float> portable = z;
      const double portable_loss =
          softmax_cross_entropy_portable(portable.data(), bias.data(), size, target, steps, true);
      std::vector<float> vectorized = z;
      double vectorized_loss = 0;
      const bool has_avx2 = softmax_cross_entropy_avx2(vectorized.data(), bias.data(), size, target,
                                                       steps, true, &vectorized_loss);
      ran_avx2 |= has_avx2;
      // Losses of float logits: relative 1e-5 (plus 1e-6 for a loss near 0).
      EXPECT_NEAR(portable_loss, expected, 1e-5 * std::fabs(expected) + 1e-6) << size;
      if (has_avx2) {
        EXPECT_NEAR(vectorized_loss, expected, 1e-5 * std::fabs(expected) + 1e-6) << size;
      }
      // Gradient entries lie in [-1/steps, 1/steps]: 1e-6 absolute is float rounding.
      double sum = 0;
      for (size_t i = 0; i < z.size(); ++i) {
        EXPECT_NEAR(portable[i], reference[i], 1e-6) << size << " " << i;
        if (has_avx2) {
          EXPECT_NEAR(vectorized[i], reference[i], 1e-6) << size << " " << i;
        }
        sum += has_avx2 ? vectorized[i] : portable[i];
      }
      EXPECT_NEAR(sum, 0.0, 1e-5) << "softmax - onehot sums to 0";  // a wrong exp does not
    }
  }
  if (!ran_avx2) std::printf("this CPU has no AVX2+FMA: checked the portable kernel only\n");
}

// Without the gradient, z holds exp(z + b - max) and only the loss matters.
TEST(SoftmaxCrossEntropy, LossOfAUniformColumnIsLogSize) {
  std::vector<float> z(1000, 2.5f), bias(1000, 0.0f);
  EXPECT_NEAR(blur::trainer::softmax_cross_entropy(z.data(), bias.data(), 1000, 17, 1.0f, false),
              std::log(1000.0), 1e-6);
}

}  // namespace
