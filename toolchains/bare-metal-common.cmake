# The architecture-neutral part of the bare-metal toolchain files: picolibc,
# no exceptions or RTTI, unused sections dropped, the image placed by
# picolibc's linker script in the memory map below, semihosting for output
# and exit status, and QEMU as the emulator. cortex-m-common.cmake (Arm) and
# riscv32.cmake set, then include this file:
#   BLUR_FIRMWARE_TARGET     short name: images are blur-firmware-<name>[-minimal],
#                            size budgets are keyed by it (size_budgets.cmake)
#   BLUR_BARE_METAL_CPU      the compiler's CPU flags
#   BLUR_BARE_METAL_CXX_SPECS  picolibc's specs for C++ (picolibcpp.specs, or
#                            picolibc.specs where the toolchain has no C++ library)
#   BLUR_BARE_METAL_FLASH, _FLASH_SIZE, _RAM, _RAM_SIZE, _STACK_SIZE
#                            the memory map picolibc's linker script places
#                            the image in (and the stack it reserves)
#   BLUR_BARE_METAL_CRT0     picolibc's start-up code: semihost (also fetches
#                            a command line, 1.3 KiB of RAM) or hosted
#   BLUR_BARE_METAL_QEMU     the QEMU command and machine (qemu-system-... -M ...),
#                            empty for a board QEMU does not model
#   BLUR_BARE_METAL_FIRMWARE_QEMU, BLUR_BARE_METAL_FIRMWARE_MEMORY
#                            optional: another QEMU board for the firmware
#                            example's images, and the linker flags of its
#                            memory (the tests keep the first board)
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(BLUR_FIRMWARE_TARGET ${BLUR_FIRMWARE_TARGET} CACHE STRING "Firmware target (toolchain file)" FORCE)

set(CMAKE_C_FLAGS_INIT
  "${BLUR_BARE_METAL_CPU} --specs=picolibc.specs -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${BLUR_BARE_METAL_CPU} --specs=${BLUR_BARE_METAL_CXX_SPECS} -fno-exceptions \
-fno-rtti -fno-threadsafe-statics -ffunction-sections -fdata-sections")
set(CMAKE_EXE_LINKER_FLAGS_INIT
  "--oslib=semihost --crt0=${BLUR_BARE_METAL_CRT0} -Wl,--gc-sections \
-Wl,--defsym=__flash=${BLUR_BARE_METAL_FLASH} -Wl,--defsym=__flash_size=${BLUR_BARE_METAL_FLASH_SIZE} \
-Wl,--defsym=__ram=${BLUR_BARE_METAL_RAM} -Wl,--defsym=__ram_size=${BLUR_BARE_METAL_RAM_SIZE} \
-Wl,--defsym=__stack_size=${BLUR_BARE_METAL_STACK_SIZE}")

set(_qemu_options -nographic -monitor none -serial none
    -semihosting-config enable=on,target=native -kernel)
if(BLUR_BARE_METAL_QEMU)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${BLUR_BARE_METAL_QEMU} ${_qemu_options})
endif()
if(BLUR_BARE_METAL_FIRMWARE_QEMU)
  set(BLUR_FIRMWARE_EMULATOR ${BLUR_BARE_METAL_FIRMWARE_QEMU} ${_qemu_options}
      CACHE INTERNAL "QEMU command of the firmware images")
else()
  set(BLUR_FIRMWARE_EMULATOR ${CMAKE_CROSSCOMPILING_EMULATOR}
      CACHE INTERNAL "QEMU command of the firmware images")
endif()
set(BLUR_FIRMWARE_LINK_OPTIONS "${BLUR_BARE_METAL_FIRMWARE_MEMORY}"
    CACHE INTERNAL "Linker flags of the firmware images' memory")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
