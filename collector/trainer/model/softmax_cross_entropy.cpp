#include "trainer/model/softmax_cross_entropy.h"

namespace blur::trainer {

#if defined(__x86_64__)
// softmax_avx2.cpp, compiled with -mavx2 -mfma; call only where the CPU has both.
extern "C" double blur_softmax_cross_entropy_avx2(float* z, const float* bias, int32_t size,
                                                  int32_t target, float steps, int gradient);
namespace {
const bool kHasAvx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}  // namespace
#else
namespace {
constexpr bool kHasAvx2 = false;
}  // namespace
#endif

bool softmax_cross_entropy_avx2(float* z, const float* bias, int32_t size, int32_t target,
                                float steps, bool gradient, double* loss) {
#if defined(__x86_64__)
  if (!kHasAvx2) return false;
  *loss = blur_softmax_cross_entropy_avx2(z, bias, size, target, steps, gradient ? 1 : 0);
  return true;
#else
  (void)z, (void)bias, (void)size, (void)target, (void)steps, (void)gradient, (void)loss;
  return false;
#endif
}

double softmax_cross_entropy(float* z, const float* bias, int32_t size, int32_t target, float steps,
                             bool gradient) {
  double loss = 0;
  if (softmax_cross_entropy_avx2(z, bias, size, target, steps, gradient, &loss)) return loss;
  return softmax_cross_entropy_portable(z, bias, size, target, steps, gradient);
}

std::string softmax_backend() { return kHasAvx2 ? "AVX2+FMA" : "portable"; }

}  // namespace blur::trainer
