// Mechanism identifiers, shared by the device and the wire schema
// (values equal blur.proto's Mechanism enum).
#ifndef BLUR_MECHANISM_H
#define BLUR_MECHANISM_H

#include <stdint.h>

namespace blur {

enum class MechanismId : uint8_t {
  kBinaryRandomizedResponse = 1,       // payload: bit
  kGeneralizedRandomizedResponse = 2,  // payload: index
  kSymmetricUnaryEncoding = 3,         // payload: bits
  kOptimizedUnaryEncoding = 4,         // payload: bits
  kDiscreteLaplace = 5,                // payload: value (signed, grid units)
  kOneBitMean = 6,                     // payload: bit
  kHadamardResponse = 7,               // payload: index
  kOptimizedLocalHashing = 8,          // payload: local_hash
  kBinaryLocalHashing = 9,             // payload: local_hash
  kRappor = 10,                        // payload: bloom
};

// The mechanisms a Client build compiles in: bit i for MechanismId i. Set by
// CMake's blur_client_library(<target> MECHANISMS ...); firmware leaves the
// others out of its flash (add_metric then answers kNotBuilt). Default: all.
#ifndef BLUR_MECHANISM_SET
#define BLUR_MECHANISM_SET 0x7FEu
#endif
// 1: memoized metrics (longitudinal epsilon) are compiled into the Client.
#ifndef BLUR_MEMOIZATION
#define BLUR_MEMOIZATION 1
#endif

constexpr bool mechanism_built(MechanismId id) {
  return ((BLUR_MECHANISM_SET >> static_cast<unsigned>(id)) & 1u) != 0;
}
inline constexpr bool kMemoizationBuilt = BLUR_MEMOIZATION != 0;

}  // namespace blur

#endif  // BLUR_MECHANISM_H
