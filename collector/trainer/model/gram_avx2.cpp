// The AVX2+FMA Gram kernel (gram_matrix.h). Like softmax_avx2.cpp, this
// file alone is compiled with -mavx2 -mfma and uses only intrinsics and C
// code: an inline function or template from a shared header would be
// compiled here with AVX2 instructions, and the linker could keep that copy
// for the whole program, which must run on CPUs without them.
#include <immintrin.h>
#include <stdint.h>

namespace {

// The 8 lanes' float sum, added in double.
inline double lane_sum(__m256 v) {
  const __m256d wide = _mm256_add_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(v)),
                                     _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
  const __m128d half = _mm_add_pd(_mm256_castpd256_pd128(wide), _mm256_extractf128_pd(wide, 1));
  return _mm_cvtsd_f64(_mm_add_sd(half, _mm_unpackhi_pd(half, half)));
}

inline int64_t clamp_column(int64_t c, int64_t cols) { return c < cols ? c : cols - 1; }

}  // namespace

// Tiles of 4 columns (s) by 2 (t) covering the lower triangle: 8 running
// dot products over the rows, 8 lanes each (8 accumulators keep both FMA
// pipes busy; 6 loads per 8 FMAs). Columns past the end repeat the last
// one and are not stored; rows past the last multiple of 8 are added in
// double.
extern "C" void blur_gram_lower_avx2(const float* x, int64_t rows, int64_t cols, int64_t ld,
                                     double* out) {
  const int64_t whole = rows - rows % 8;
  for (int64_t s0 = 0; s0 < cols; s0 += 4) {
    const float* a[4];
    for (int64_t i = 0; i < 4; ++i) a[i] = x + clamp_column(s0 + i, cols) * ld;
    const int64_t last_t = clamp_column(s0 + 3, cols);
    for (int64_t t0 = 0; t0 <= last_t; t0 += 2) {
      const float* b0 = x + t0 * ld;
      const float* b1 = x + clamp_column(t0 + 1, cols) * ld;
      __m256 tile[4][2];
#pragma GCC unroll 4
      for (int64_t i = 0; i < 4; ++i) tile[i][0] = tile[i][1] = _mm256_setzero_ps();
      for (int64_t r = 0; r < whole; r += 8) {
        const __m256 u0 = _mm256_loadu_ps(b0 + r), u1 = _mm256_loadu_ps(b1 + r);
#pragma GCC unroll 4
        for (int64_t i = 0; i < 4; ++i) {  // unrolled: the tile stays in 8 registers
          const __m256 v = _mm256_loadu_ps(a[i] + r);
          tile[i][0] = _mm256_fmadd_ps(v, u0, tile[i][0]);
          tile[i][1] = _mm256_fmadd_ps(v, u1, tile[i][1]);
        }
      }
      for (int64_t i = 0; i < 4; ++i) {
        for (int64_t j = 0; j < 2; ++j) {
          const int64_t s = s0 + i, t = t0 + j;
          if (s >= cols || t > s) continue;
          double sum = lane_sum(tile[i][j]);
          for (int64_t r = whole; r < rows; ++r) {
            sum += static_cast<double>(x[r + s * ld]) * static_cast<double>(x[r + t * ld]);
          }
          out[s + t * cols] = sum;
        }
      }
    }
  }
}
