// The emulated flash the firmware example's images run on, shaped like the
// target's (examples/firmware-m4/CMakeLists.txt sets the geometry): by
// default an STM32L4's, 2 KiB pages programmed in 8-byte ECC words that
// refuse a second program; on the Cortex-M0+ an nRF51's (the micro:bit QEMU
// runs it on), 1 KiB pages programmed in 4-byte words, NOR. Ledger on
// blocks 0-1, the report queue on 2-5 (Client::open's default partitions).
#ifndef BLUR_EXAMPLES_FIRMWARE_FLASH_H
#define BLUR_EXAMPLES_FIRMWARE_FLASH_H

#include <stdint.h>

#include "emulated_flash.h"

#if !defined(BLUR_FIRMWARE_BLOCK_SIZE)
#define BLUR_FIRMWARE_BLOCK_SIZE 2048
#define BLUR_FIRMWARE_PROG_SIZE 8
#define BLUR_FIRMWARE_ECC 1
#endif

namespace blur {
namespace firmware {

constexpr uint32_t kBlockSize = BLUR_FIRMWARE_BLOCK_SIZE;
constexpr uint32_t kBlockCount = 6;

inline flash::Config flash_config() {
  flash::Config config;
  config.block_size = kBlockSize;
  config.block_count = kBlockCount;
  config.prog_size = BLUR_FIRMWARE_PROG_SIZE;
  config.erase_value = 0xFF;
  config.refuse_second_program = BLUR_FIRMWARE_ECC != 0;
  return config;
}

}  // namespace firmware
}  // namespace blur

#endif  // BLUR_EXAMPLES_FIRMWARE_FLASH_H
