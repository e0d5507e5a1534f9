# Cortex-M4 (soft float) with arm-none-eabi-gcc and picolibc; tests run on
# QEMU's mps2-an386 board with semihosting (program output and exit status
# reach the host). For your own board: keep the compiler flags, replace the
# memory map (__flash/__ram symbols or your own linker script) and the
# emulator, and fill ports/cortex-m's callbacks with your TRNG and flash.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_CXX_COMPILER arm-none-eabi-g++)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(BLUR_PLATFORM cortex-m CACHE STRING "Blur target platform" FORCE)

set(_cpu "-mcpu=cortex-m4 -mthumb -mfloat-abi=soft")
set(CMAKE_C_FLAGS_INIT "${_cpu} --specs=picolibc.specs -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${_cpu} --specs=picolibcpp.specs -fno-exceptions -fno-rtti -fno-threadsafe-statics -ffunction-sections -fdata-sections")
# mps2-an386: 4 MiB flash at 0, 4 MiB RAM at 0x20000000; 16 KiB reserved stack.
set(CMAKE_EXE_LINKER_FLAGS_INIT
  "--oslib=semihost --crt0=semihost -Wl,--gc-sections \
-Wl,--defsym=__flash=0x0 -Wl,--defsym=__flash_size=0x400000 \
-Wl,--defsym=__ram=0x20000000 -Wl,--defsym=__ram_size=0x400000 \
-Wl,--defsym=__stack_size=0x4000")

set(CMAKE_CROSSCOMPILING_EMULATOR
  qemu-system-arm -M mps2-an386 -cpu cortex-m4 -nographic -monitor none
  -serial none -semihosting-config enable=on,target=native -kernel)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
