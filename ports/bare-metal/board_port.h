// ports/bare-metal: QEMU's Cortex-M boards (mps2-an386, -an385, -an500, -an505,
// microbit) and its RISC-V virt board (toolchains/riscv32.cmake), whose
// semihosting differs only in its trap instruction (semihosting.h).
//
// - Entropy: the board has no TRNG, so the port reads the host's
//   /dev/urandom through semihosting. On real silicon, replace
//   `board_entropy` with the TRNG driver (e.g. STM32 RNG, nRF CRACEN) and
//   keep its health checks: return kEntropyFailure when they fail.
// - Storage: flash emulated by ports/flash (flash::EmulatedFlash, whose
//   header documents every behaviour) in a RAM array that the caller owns;
//   with board_port_persistent() the array is loaded from a host file at
//   boot and written back on every sync (semihosting), so a test can
//   "reboot" the emulated device and find its state again. Erase counts
//   (when the caller gives counters) live in RAM only: a reboot zeroes them.
//   On real silicon, replace the storage callbacks with the flash driver
//   and give the Port the chip's program unit and erased value.
//
// No heap, no exceptions, no floating point: this is device code.
#ifndef BLUR_PORTS_CORTEX_M_BOARD_PORT_H
#define BLUR_PORTS_CORTEX_M_BOARD_PORT_H

#include <stdint.h>

#include "blur/port.h"
#include "emulated_flash.h"

namespace blur {
namespace bare_metal {

struct BoardContext {
  // All zero until board_port() sets them (a global context costs no .data).
  flash::EmulatedFlash flash;          // over the caller's bytes
  int32_t entropy_handle = 0;          // semihosting handle of /dev/urandom, -1 until opened
  const char* storage_path = nullptr;  // host file behind the flash, or nullptr
};

// Erases the RAM flash (config.block_size * config.block_count bytes at
// `flash`; `erase_counts`, config.block_count of them, may be nullptr when
// config.erase_cycles is 0) and returns the port bound to `context`, with
// the configuration's geometry (block size and count, prog_size,
// erase_value). An invalid configuration (flash::EmulatedFlash::init)
// gives a port whose storage calls all fail: context->flash.configured()
// says which.
Port board_port(BoardContext* context, uint8_t* flash, const flash::Config& config,
                uint32_t* erase_counts = nullptr);
// NOR flash of the given geometry: programming a unit that is not erased
// clears bits (AND for 0xFF, OR for 0x00), no wear-out.
Port board_port(BoardContext* context, uint8_t* flash, uint32_t block_size, uint32_t block_count,
                uint32_t prog_size = 1, uint8_t erase_value = 0xFF);

// The same, with the flash loaded from the host file `path` (erased if the
// file is missing or has another size) and saved to it on every sync.
Port board_port_persistent(BoardContext* context, uint8_t* flash, const flash::Config& config,
                           const char* path, uint32_t* erase_counts = nullptr);
Port board_port_persistent(BoardContext* context, uint8_t* flash, uint32_t block_size,
                           uint32_t block_count, const char* path, uint32_t prog_size = 1,
                           uint8_t erase_value = 0xFF);

}  // namespace bare_metal
}  // namespace blur

#endif  // BLUR_PORTS_CORTEX_M_BOARD_PORT_H
