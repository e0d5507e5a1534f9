#include "trainer/model/gram_matrix.h"

#include "trainer/model/cpu_features.h"

namespace blur::trainer {

#if defined(__x86_64__)
// gram_avx2.cpp, compiled with -mavx2 -mfma; call only where the CPU has both.
extern "C" void blur_gram_lower_avx2(const float* x, int64_t rows, int64_t cols, int64_t ld,
                                     double* out);
#endif

bool gram_lower_avx2(const float* x, Eigen::Index rows, Eigen::Index cols, Eigen::Index ld,
                     double* out) {
#if defined(__x86_64__)
  if (!cpu_has_avx2_fma()) return false;
  blur_gram_lower_avx2(x, rows, cols, ld, out);
  return true;
#else
  (void)x, (void)rows, (void)cols, (void)ld, (void)out;
  return false;
#endif
}

void gram_lower(const float* x, Eigen::Index rows, Eigen::Index cols, Eigen::Index ld,
                double* out) {
  if (!gram_lower_avx2(x, rows, cols, ld, out)) gram_lower_portable(x, rows, cols, ld, out);
}

}  // namespace blur::trainer
