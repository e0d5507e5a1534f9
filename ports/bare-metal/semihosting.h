// Semihosting calls (Arm IHI 0082; RISC-V uses the same operations): the
// debugger (here QEMU with -semihosting-config enable=on,target=native)
// services `bkpt 0xAB` (Arm) or the marked `ebreak` (RISC-V) with the
// operation in r0/a0 and a pointer to its arguments in r1/a1.
#ifndef BLUR_PORTS_CORTEX_M_SEMIHOSTING_H
#define BLUR_PORTS_CORTEX_M_SEMIHOSTING_H

#include <stdint.h>

namespace blur {
namespace bare_metal {

enum class SemihostingOp : uint32_t {
  kOpen = 0x01,
  kClose = 0x02,
  kWrite = 0x05,
  kRead = 0x06,
  kFlen = 0x0C,
  kTime = 0x11,  // seconds since 1970 on the host
};

#if defined(__riscv)
// RISC-V semihosting (the RISC-V Semihosting specification): the same
// operations, in a0 and a1, trapped by `ebreak` between two marker
// instructions, all three uncompressed (QEMU reads them to tell a
// semihosting call from a breakpoint).
inline int32_t semihosting_call(SemihostingOp op, const void* args) {
  register uint32_t a0 __asm__("a0") = static_cast<uint32_t>(op);
  register const void* a1 __asm__("a1") = args;
  __asm__ volatile(
      ".option push\n"
      ".option norvc\n"
      ".balign 16\n"
      "slli zero, zero, 0x1f\n"
      "ebreak\n"
      "srai zero, zero, 7\n"
      ".option pop"
      : "+r"(a0)
      : "r"(a1)
      : "memory");
  return static_cast<int32_t>(a0);
}
#else
inline int32_t semihosting_call(SemihostingOp op, const void* args) {
  register uint32_t r0 __asm__("r0") = static_cast<uint32_t>(op);
  register const void* r1 __asm__("r1") = args;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return static_cast<int32_t>(r0);
}
#endif

}  // namespace bare_metal
}  // namespace blur

#endif  // BLUR_PORTS_CORTEX_M_SEMIHOSTING_H
