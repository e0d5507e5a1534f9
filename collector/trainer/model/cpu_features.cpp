#include "trainer/model/cpu_features.h"

namespace blur::trainer {

bool cpu_has_avx2_fma() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

}  // namespace blur::trainer
