// ports/cortex-m: the QEMU mps2-an386 board (Cortex-M4).
//
// - Entropy: the board has no TRNG, so the port reads the host's
//   /dev/urandom through semihosting. On real silicon, replace
//   `board_entropy` with the TRNG driver (e.g. STM32 RNG, nRF CRACEN) and
//   keep its health checks: return kEntropyFailure when they fail.
// - Storage: flash emulated in a RAM array that the caller owns; with
//   board_port_persistent() the array is loaded from a host file at boot
//   and written back on every sync (semihosting), so a test can "reboot"
//   the emulated device and find its state again.
//
// No heap, no exceptions, no floating point: this is device code.
#ifndef BLUR_PORTS_CORTEX_M_BOARD_PORT_H
#define BLUR_PORTS_CORTEX_M_BOARD_PORT_H

#include <stdint.h>

#include "blur/port.h"

namespace blur {
namespace cortex_m {

struct BoardContext {
  uint8_t* flash;  // block_size * block_count bytes, caller-owned
  uint32_t block_size;
  uint32_t block_count;
  int32_t entropy_handle;    // semihosting handle of /dev/urandom, -1 until opened
  const char* storage_path;  // host file behind the flash, or nullptr
};

// Erases the RAM flash and returns the port bound to `context`.
Port board_port(BoardContext* context, uint8_t* flash, uint32_t block_size, uint32_t block_count);

// The same, with the flash loaded from the host file `path` (erased if the
// file is missing or has another size) and saved to it on every sync.
Port board_port_persistent(BoardContext* context, uint8_t* flash, uint32_t block_size,
                           uint32_t block_count, const char* path);

}  // namespace cortex_m
}  // namespace blur

#endif  // BLUR_PORTS_CORTEX_M_BOARD_PORT_H
