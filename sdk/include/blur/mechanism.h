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

}  // namespace blur

#endif  // BLUR_MECHANISM_H
