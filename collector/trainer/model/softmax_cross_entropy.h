// The output layer's loss for one prediction: softmax cross-entropy over a
// column of V logits, and in place its gradient. The model spends about a
// sixth of a training step here (V exps per predicted token), so on x86-64
// CPUs with AVX2 and FMA a hand-vectorized kernel (softmax_avx2.cpp: 8
// lanes, fused multiply-adds, Cephes' single-precision exp polynomial) runs
// instead of the portable Eigen code, chosen once at run time: the binary
// still runs on any x86-64 and on aarch64. Like OpenBLAS's kernels, the
// choice can change the last bits of a result between machines, never
// between runs on one machine.
#ifndef BLUR_TRAINER_MODEL_SOFTMAX_CROSS_ENTROPY_H
#define BLUR_TRAINER_MODEL_SOFTMAX_CROSS_ENTROPY_H

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <string>

namespace blur::trainer {

// z[0..size) += bias; returns -log softmax(z)[target] (in double). With
// `gradient`, leaves (softmax(z) - onehot(target)) / steps in z, the
// gradient of the example's mean loss over its `steps` predictions.
template <typename Scalar>
double softmax_cross_entropy_portable(Scalar* z, const Scalar* bias, int32_t size, int32_t target,
                                      Scalar steps, bool gradient) {
  Eigen::Map<Eigen::Matrix<Scalar, Eigen::Dynamic, 1>> column(z, size);
  column += Eigen::Map<const Eigen::Matrix<Scalar, Eigen::Dynamic, 1>>(bias, size);
  const Scalar m = column.maxCoeff();
  const Scalar zy = column(target);
  column.array() = (column.array() - m).exp();
  const Scalar sum = column.sum();
  if (gradient) {
    column *= Scalar(1) / (sum * steps);
    column(target) -= Scalar(1) / steps;
  }
  return std::log(static_cast<double>(sum)) + static_cast<double>(m - zy);
}

// The float model's: the AVX2+FMA kernel where the CPU has both.
double softmax_cross_entropy(float* z, const float* bias, int32_t size, int32_t target, float steps,
                             bool gradient);
inline double softmax_cross_entropy(double* z, const double* bias, int32_t size, int32_t target,
                                    double steps, bool gradient) {
  return softmax_cross_entropy_portable(z, bias, size, target, steps, gradient);
}

// "AVX2+FMA" or "portable": which float kernel this machine runs.
std::string softmax_backend();
// For tests: the AVX2 kernel, or false (nothing done) where it is absent.
bool softmax_cross_entropy_avx2(float* z, const float* bias, int32_t size, int32_t target,
                                float steps, bool gradient, double* loss);

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_MODEL_SOFTMAX_CROSS_ENTROPY_H
