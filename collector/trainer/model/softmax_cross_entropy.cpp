#include "trainer/model/softmax_cross_entropy.h"

#include <atomic>

#include "trainer/model/cpu_features.h"

namespace blur::trainer {

#if defined(__x86_64__)
// softmax_avx2.cpp, compiled with -mavx2 -mfma; call only where the CPU has both.
extern "C" double blur_softmax_cross_entropy_avx2(float* z, const float* bias, int32_t size,
                                                  int32_t target, float steps, int gradient);
#endif

bool softmax_cross_entropy_avx2(float* z, const float* bias, int32_t size, int32_t target,
                                float steps, bool gradient, double* loss) {
#if defined(__x86_64__)
  if (!cpu_has_avx2_fma()) return false;
  *loss = blur_softmax_cross_entropy_avx2(z, bias, size, target, steps, gradient ? 1 : 0);
  return true;
#else
  (void)z, (void)bias, (void)size, (void)target, (void)steps, (void)gradient, (void)loss;
  return false;
#endif
}

namespace {
std::atomic<bool> g_force_portable{false};
}  // namespace

void force_portable_softmax(bool portable) { g_force_portable = portable; }

double softmax_cross_entropy(float* z, const float* bias, int32_t size, int32_t target, float steps,
                             bool gradient) {
  double loss = 0;
  if (!g_force_portable &&
      softmax_cross_entropy_avx2(z, bias, size, target, steps, gradient, &loss)) {
    return loss;
  }
  return softmax_cross_entropy_portable(z, bias, size, target, steps, gradient);
}

std::string softmax_backend() { return cpu_has_avx2_fma() && !g_force_portable ? "AVX2+FMA" : "portable"; }

}  // namespace blur::trainer
