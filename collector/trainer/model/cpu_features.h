// Which hand-vectorized kernels this machine can run (x86-64: AVX2 and
// FMA, checked once at run time; the kernels live in files of their own
// built with -mavx2 -mfma, so the binary still runs on any x86-64 and on
// aarch64, which take the portable paths).
#ifndef BLUR_TRAINER_MODEL_CPU_FEATURES_H
#define BLUR_TRAINER_MODEL_CPU_FEATURES_H

namespace blur::trainer {

bool cpu_has_avx2_fma();

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_MODEL_CPU_FEATURES_H
