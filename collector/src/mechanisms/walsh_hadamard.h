// The fast Walsh-Hadamard transform, shared by the supports of Hadamard
// response and local hashing.
#ifndef BLUR_COLLECTOR_MECHANISMS_WALSH_HADAMARD_H
#define BLUR_COLLECTOR_MECHANISMS_WALSH_HADAMARD_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace blur::collector {

// In place, w.size() a power of two: w[u] <- sum_j w[j] (-1)^popcount(u & j).
inline void walsh_hadamard(std::vector<int64_t>& w) {
  for (size_t half = 1; half < w.size(); half <<= 1) {
    for (size_t block = 0; block < w.size(); block += 2 * half) {
      for (size_t i = block; i < block + half; ++i) {
        const int64_t a = w[i], b = w[i + half];
        w[i] = a + b;
        w[i + half] = a - b;
      }
    }
  }
}

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_MECHANISMS_WALSH_HADAMARD_H
