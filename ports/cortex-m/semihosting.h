// Arm semihosting calls (Arm IHI 0082): the debugger (here QEMU with
// -semihosting-config enable=on,target=native) services `bkpt 0xAB` with
// the operation in r0 and a pointer to its arguments in r1.
#ifndef BLUR_PORTS_CORTEX_M_SEMIHOSTING_H
#define BLUR_PORTS_CORTEX_M_SEMIHOSTING_H

#include <stdint.h>

namespace blur {
namespace cortex_m {

enum class SemihostingOp : uint32_t {
  kOpen = 0x01,
  kClose = 0x02,
  kWrite = 0x05,
  kRead = 0x06,
  kFlen = 0x0C,
  kTime = 0x11,  // seconds since 1970 on the host
};

inline int32_t semihosting_call(SemihostingOp op, const void* args) {
  register uint32_t r0 __asm__("r0") = static_cast<uint32_t>(op);
  register const void* r1 __asm__("r1") = args;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return static_cast<int32_t>(r0);
}

}  // namespace cortex_m
}  // namespace blur

#endif  // BLUR_PORTS_CORTEX_M_SEMIHOSTING_H
