#ifndef BLUR_VERSION_H
#define BLUR_VERSION_H

#include <stdint.h>

namespace blur {

inline constexpr uint32_t kSdkVersionMajor = 0;
inline constexpr uint32_t kSdkVersionMinor = 1;
inline constexpr uint32_t kSdkVersionPatch = 0;
// As sent on the wire: major << 16 | minor << 8 | patch.
inline constexpr uint32_t kSdkVersion =
    kSdkVersionMajor << 16 | kSdkVersionMinor << 8 | kSdkVersionPatch;

}  // namespace blur

#endif  // BLUR_VERSION_H
