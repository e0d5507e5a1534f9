// Cortex-M7 caches (ARMv7-M architecture reference, B2.2.7): invalidate the
// instruction cache and every set and way of the L1 data cache, then set
// CCR.IC and CCR.DC. Returns whether CCR.DC reads back set: QEMU models no
// caches (CCR.IC and CCR.DC are read-as-zero on its Cortex-M7 and the
// maintenance registers do nothing), so on mps2-an500 it returns false;
// on silicon true. The SDK needs nothing from a port for its caches: its
// flash goes through the Port's callbacks, and a flash driver that reads
// memory-mapped flash after programming it invalidates those lines itself.
#ifndef BLUR_PORTS_CORTEX_M_CACHE_H
#define BLUR_PORTS_CORTEX_M_CACHE_H

#include <stdint.h>

namespace blur {
namespace bare_metal {

inline bool enable_caches() {
  volatile uint32_t* const ccr = reinterpret_cast<volatile uint32_t*>(0xE000ED14u);
  volatile uint32_t* const ccsidr = reinterpret_cast<volatile uint32_t*>(0xE000ED80u);
  volatile uint32_t* const csselr = reinterpret_cast<volatile uint32_t*>(0xE000ED84u);
  volatile uint32_t* const iciallu = reinterpret_cast<volatile uint32_t*>(0xE000EF50u);
  volatile uint32_t* const dcisw = reinterpret_cast<volatile uint32_t*>(0xE000EF60u);
  constexpr uint32_t kDataCache = 1u << 16, kInstructionCache = 1u << 17;
  __asm__ volatile("dsb\n isb" ::: "memory");
  *iciallu = 0;
  __asm__ volatile("dsb\n isb" ::: "memory");
  *ccr = *ccr | kInstructionCache;
  *csselr = 0;  // level 1 data cache
  __asm__ volatile("dsb" ::: "memory");
  const uint32_t geometry = *ccsidr;
  const uint32_t sets = (geometry >> 13) & 0x7FFFu;  // minus one
  const uint32_t ways = (geometry >> 3) & 0x3FFu;    // minus one
  const uint32_t line_shift = (geometry & 7u) + 4u;
  const uint32_t way_shift = ways == 0 ? 0 : static_cast<uint32_t>(__builtin_clz(ways));
  for (uint32_t set = 0; set <= sets; ++set) {
    for (uint32_t way = 0; way <= ways; ++way) *dcisw = (set << line_shift) | (way << way_shift);
  }
  __asm__ volatile("dsb" ::: "memory");
  *ccr = *ccr | kDataCache;
  __asm__ volatile("dsb\n isb" ::: "memory");
  return (*ccr & kDataCache) != 0;
}

}  // namespace bare_metal
}  // namespace blur

#endif  // BLUR_PORTS_CORTEX_M_CACHE_H
