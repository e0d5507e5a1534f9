// The AVX2+FMA softmax cross-entropy kernel (softmax_cross_entropy.h). This
// file alone is compiled with -mavx2 -mfma, and it uses only intrinsics and
// C functions: an inline function or template from a shared header would
// be compiled here with AVX2 instructions, and the linker could keep that
// copy for the whole program, which must run on CPUs without them.
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

namespace {

// e^x for x <= 0 (x below -87.3 gives e^-87.3, about 1e-38): Cody-Waite
// reduction x = n ln 2 + r, |r| <= ln 2 / 2, and Cephes' expf polynomial
// (relative error about 2^-23), times 2^n built in the exponent bits.
inline __m256 exp_nonpositive(__m256 x) {
  x = _mm256_max_ps(x, _mm256_set1_ps(-87.3f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i exponent =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(exponent));
}

inline float horizontal_max(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

inline float horizontal_sum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// The last size % 8 lanes, through a padded block (padding: e^-87.3 lanes,
// never stored nor summed).
inline float exp_tail(float* z, int32_t count, float max) {
  float block[8];
  for (int32_t k = 0; k < 8; ++k) block[k] = k < count ? z[k] - max : -87.3f;
  _mm256_storeu_ps(block, exp_nonpositive(_mm256_loadu_ps(block)));
  float sum = 0;
  for (int32_t k = 0; k < count; ++k) {
    z[k] = block[k];
    sum += block[k];
  }
  return sum;
}

}  // namespace

extern "C" double blur_softmax_cross_entropy_avx2(float* z, const float* bias, int32_t size,
                                                  int32_t target, float steps, int gradient) {
  const int32_t whole = size - size % 8;
  __m256 vmax = _mm256_set1_ps(-INFINITY);
  for (int32_t i = 0; i < whole; i += 8) {
    const __m256 v = _mm256_add_ps(_mm256_loadu_ps(z + i), _mm256_loadu_ps(bias + i));
    _mm256_storeu_ps(z + i, v);
    vmax = _mm256_max_ps(vmax, v);
  }
  float max = horizontal_max(vmax);
  for (int32_t i = whole; i < size; ++i) {
    z[i] += bias[i];
    if (z[i] > max) max = z[i];
  }
  const float target_logit = z[target];
  const __m256 vm = _mm256_set1_ps(max);
  __m256 vsum = _mm256_setzero_ps();
  for (int32_t i = 0; i < whole; i += 8) {
    const __m256 e = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(z + i), vm));
    _mm256_storeu_ps(z + i, e);
    vsum = _mm256_add_ps(vsum, e);
  }
  const float sum = horizontal_sum(vsum) + exp_tail(z + whole, size - whole, max);
  if (gradient != 0) {
    const __m256 scale = _mm256_set1_ps(1.0f / (sum * steps));
    for (int32_t i = 0; i < whole; i += 8) {
      _mm256_storeu_ps(z + i, _mm256_mul_ps(_mm256_loadu_ps(z + i), scale));
    }
    for (int32_t i = whole; i < size; ++i) z[i] *= 1.0f / (sum * steps);
    z[target] -= 1.0f / steps;
  }
  return log(static_cast<double>(sum)) + static_cast<double>(max - target_logit);
}
