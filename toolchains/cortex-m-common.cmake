# The part every Cortex-M toolchain file shares: arm-none-eabi-gcc with
# picolibc, no exceptions or RTTI, soft float (the SDK uses no floating
# point), semihosting for output and exit status, and QEMU as the emulator.
# A target file (cortex-m0plus.cmake, cortex-m4.cmake, ...) sets, then
# includes this file:
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
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(BLUR_PLATFORM cortex-m CACHE STRING "Blur target platform" FORCE)
set(BLUR_CORTEX_M_TARGET ${BLUR_CORTEX_M_TARGET} CACHE STRING "Cortex-M target (toolchain file)" FORCE)

foreach(_default FLASH=0x0 FLASH_SIZE=0x400000 RAM=0x20000000 RAM_SIZE=0x400000 STACK_SIZE=0x4000)
  string(REPLACE "=" ";" _default ${_default})
  list(GET _default 0 _name)
  if(NOT DEFINED BLUR_CORTEX_M_${_name})
    list(GET _default 1 BLUR_CORTEX_M_${_name})
  endif()
endforeach()
if(NOT BLUR_CORTEX_M_CRT0)
  set(BLUR_CORTEX_M_CRT0 semihost)
endif()
set(CMAKE_C_FLAGS_INIT
  "${BLUR_CORTEX_M_CPU} --specs=picolibc.specs -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${BLUR_CORTEX_M_CPU} --specs=picolibcpp.specs -fno-exceptions -fno-rtti \
-fno-threadsafe-statics -ffunction-sections -fdata-sections")
set(CMAKE_EXE_LINKER_FLAGS_INIT
  "--oslib=semihost --crt0=${BLUR_CORTEX_M_CRT0} -Wl,--gc-sections \
-Wl,--defsym=__flash=${BLUR_CORTEX_M_FLASH} -Wl,--defsym=__flash_size=${BLUR_CORTEX_M_FLASH_SIZE} \
-Wl,--defsym=__ram=${BLUR_CORTEX_M_RAM} -Wl,--defsym=__ram_size=${BLUR_CORTEX_M_RAM_SIZE} \
-Wl,--defsym=__stack_size=${BLUR_CORTEX_M_STACK_SIZE}")

set(_qemu_options -nographic -monitor none -serial none
    -semihosting-config enable=on,target=native -kernel)
if(BLUR_CORTEX_M_QEMU)  # (a board QEMU does not model: none)
  set(CMAKE_CROSSCOMPILING_EMULATOR qemu-system-arm ${BLUR_CORTEX_M_QEMU} ${_qemu_options})
endif()
if(BLUR_CORTEX_M_FIRMWARE_QEMU)
  set(BLUR_FIRMWARE_EMULATOR qemu-system-arm ${BLUR_CORTEX_M_FIRMWARE_QEMU} ${_qemu_options}
      CACHE INTERNAL "QEMU command of the firmware images")
else()
  set(BLUR_FIRMWARE_EMULATOR ${CMAKE_CROSSCOMPILING_EMULATOR}
      CACHE INTERNAL "QEMU command of the firmware images")
endif()
set(BLUR_FIRMWARE_LINK_OPTIONS "${BLUR_CORTEX_M_FIRMWARE_MEMORY}"
    CACHE INTERNAL "Linker flags of the firmware images' memory")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
