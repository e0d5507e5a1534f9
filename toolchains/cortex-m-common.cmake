# The part every Cortex-M toolchain file shares: arm-none-eabi-gcc with
# picolibc, soft float (the SDK uses no floating point), the MPS2 boards'
# memory map as the default, QEMU's qemu-system-arm; the rest is
# bare-metal-common.cmake's. A target file (cortex-m0plus.cmake,
# cortex-m4.cmake, ...) sets, then includes this file:
#   BLUR_CORTEX_M_TARGET   short name: images are blur-firmware-<name>[-minimal],
#                          size budgets are keyed by it (size_budgets.cmake)
#   BLUR_CORTEX_M_CPU      the compiler's CPU flags
#   BLUR_CORTEX_M_FLASH, BLUR_CORTEX_M_FLASH_SIZE, BLUR_CORTEX_M_RAM,
#   BLUR_CORTEX_M_RAM_SIZE, BLUR_CORTEX_M_STACK_SIZE
#                          the memory map picolibc's linker script places
#                          the image in (and the stack it reserves); each
#                          one left unset is the MPS2 boards': 4 MiB of
#                          flash at 0, 4 MiB of RAM at 0x20000000, 16 KiB
#                          of stack
#   BLUR_CORTEX_M_QEMU     the QEMU machine and CPU (-M ... -cpu ...)
#   BLUR_CORTEX_M_FIRMWARE_QEMU, BLUR_CORTEX_M_FIRMWARE_MEMORY
#                          optional: another QEMU board for the firmware
#                          example's images, and the linker flags of its
#                          memory (the tests keep the first board)
#   BLUR_CORTEX_M_CRT0     optional, picolibc's start-up code: semihost (the
#                          default: also fetches a command line, 1.3 KiB of
#                          RAM) or hosted (main() without arguments)
# For your own board: a file like the target files, with your CPU flags and
# memory map (or your own linker script); drop the emulator if you have none.
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)

set(BLUR_PLATFORM cortex-m CACHE STRING "Blur target platform" FORCE)

foreach(_default FLASH=0x0 FLASH_SIZE=0x400000 RAM=0x20000000 RAM_SIZE=0x400000 STACK_SIZE=0x4000
                 CRT0=semihost)
  string(REPLACE "=" ";" _default ${_default})
  list(GET _default 0 _name)
  if(NOT DEFINED BLUR_CORTEX_M_${_name})
    list(GET _default 1 BLUR_CORTEX_M_${_name})
  endif()
endforeach()
foreach(_name TARGET CPU FLASH FLASH_SIZE RAM RAM_SIZE STACK_SIZE CRT0 FIRMWARE_MEMORY)
  set(BLUR_BARE_METAL_${_name} ${BLUR_CORTEX_M_${_name}})
endforeach()
set(BLUR_FIRMWARE_TARGET ${BLUR_CORTEX_M_TARGET})
set(BLUR_BARE_METAL_CXX_SPECS picolibcpp.specs)
if(BLUR_CORTEX_M_QEMU)  # (a board QEMU does not model: none)
  set(BLUR_BARE_METAL_QEMU qemu-system-arm ${BLUR_CORTEX_M_QEMU})
endif()
if(BLUR_CORTEX_M_FIRMWARE_QEMU)
  set(BLUR_BARE_METAL_FIRMWARE_QEMU qemu-system-arm ${BLUR_CORTEX_M_FIRMWARE_QEMU})
endif()
include(${CMAKE_CURRENT_LIST_DIR}/bare-metal-common.cmake)
