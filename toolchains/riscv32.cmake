# RISC-V 32 (rv32imac, ilp32: the ESP32-C3 class) with Debian's
# riscv64-unknown-elf-gcc and picolibc; tests run on QEMU's `virt` board with
# semihosting (program output and exit status reach the host).
#
# Debian ships no libstdc++ for this target: the SDK's few standard
# facilities come from sdk/include/blur/compat/std_facilities.h, and C++ is
# compiled and linked with the gcc driver (g++ would link -lstdc++).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv32)
set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_CXX_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_ASM_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(BLUR_PLATFORM riscv CACHE STRING "Blur target platform" FORCE)

set(_cpu "-march=rv32imac -mabi=ilp32")
set(CMAKE_C_FLAGS_INIT "${_cpu} --specs=picolibc.specs -ffunction-sections -fdata-sections")
set(CMAKE_CXX_FLAGS_INIT "${_cpu} --specs=picolibc.specs -fno-exceptions -fno-rtti -fno-threadsafe-statics -ffunction-sections -fdata-sections")
# virt: RAM at 0x80000000 (QEMU's default 128 MiB); the image's "flash" is
# the first 4 MiB of it, its RAM the next 4 MiB; 16 KiB reserved stack.
set(CMAKE_EXE_LINKER_FLAGS_INIT
  "--oslib=semihost --crt0=semihost -Wl,--gc-sections \
-Wl,--defsym=__flash=0x80000000 -Wl,--defsym=__flash_size=0x400000 \
-Wl,--defsym=__ram=0x80400000 -Wl,--defsym=__ram_size=0x400000 \
-Wl,--defsym=__stack_size=0x4000")

set(CMAKE_CROSSCOMPILING_EMULATOR
  qemu-system-riscv32 -M virt -bios none -nographic -monitor none
  -serial none -semihosting-config enable=on,target=native -kernel)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
