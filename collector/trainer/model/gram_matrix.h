// Gram matrices of a column block, X^T X, for the exact per-example
// gradient norms (language_model.h): one per example and layer, of 20 or so
// columns and up to V rows (the output layer's: 5,000 x 19 for one
// example, the largest part of a DP step's extra work). OpenBLAS's SYRK
// packs both operands for such thin shapes before multiplying; on x86-64
// CPUs with AVX2 and FMA a kernel of its own (gram_avx2.cpp: 4 x 2 column
// tiles of 8-lane fused multiply-adds straight from the block, which is in
// cache when the caller has just written it) runs instead, chosen once at
// run time (cpu_features.h). Either rounds like a float GEMM: the lanes'
// float partial sums are added in double.
#ifndef BLUR_TRAINER_MODEL_GRAM_MATRIX_H
#define BLUR_TRAINER_MODEL_GRAM_MATRIX_H

#include <Eigen/Core>
#include <cstdint>

namespace blur::trainer {

// out[s + t cols] = sum_r x[r + s ld] x[r + t ld] for cols > s >= t >= 0
// (the lower triangle of the cols x cols Gram matrix, column-major; the
// upper triangle is left as it was). ld >= rows.
template <typename Scalar>
void gram_lower_portable(const Scalar* x, Eigen::Index rows, Eigen::Index cols, Eigen::Index ld,
                         double* out) {
  using Matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic>;
  const Eigen::Map<const Matrix, 0, Eigen::OuterStride<>> block(x, rows, cols,
                                                                Eigen::OuterStride<>(ld));
  Matrix gram = Matrix::Zero(cols, cols);
  gram.template selfadjointView<Eigen::Lower>().rankUpdate(block.transpose());
  for (Eigen::Index t = 0; t < cols; ++t) {
    for (Eigen::Index s = t; s < cols; ++s) out[s + t * cols] = static_cast<double>(gram(s, t));
  }
}

// The float model's: the AVX2+FMA kernel where the CPU has both.
void gram_lower(const float* x, Eigen::Index rows, Eigen::Index cols, Eigen::Index ld,
                double* out);
inline void gram_lower(const double* x, Eigen::Index rows, Eigen::Index cols, Eigen::Index ld,
                       double* out) {
  gram_lower_portable(x, rows, cols, ld, out);
}

// For tests: the AVX2 kernel, or false (nothing done) where it is absent.
bool gram_lower_avx2(const float* x, Eigen::Index rows, Eigen::Index cols, Eigen::Index ld,
                     double* out);

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_MODEL_GRAM_MATRIX_H
