# RISC-V 32 (rv32imac, ilp32: the ESP32-C3 class) with Debian's
# riscv64-unknown-elf-gcc and picolibc; tests run on QEMU's `virt` board with
# semihosting (program output and exit status reach the host). The rest is
# bare-metal-common.cmake's, as for the Cortex-M targets.
#
# Debian ships no libstdc++ for this target: the SDK's few standard
# facilities come from sdk/include/blur/compat/std_facilities.h, and C++ is
# compiled and linked with the gcc driver (g++ would link -lstdc++).
set(CMAKE_SYSTEM_PROCESSOR riscv32)
set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_CXX_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_ASM_COMPILER riscv64-unknown-elf-gcc)

set(BLUR_PLATFORM riscv CACHE STRING "Blur target platform" FORCE)

set(BLUR_FIRMWARE_TARGET riscv)
set(BLUR_BARE_METAL_CPU "-march=rv32imac -mabi=ilp32")
set(BLUR_BARE_METAL_CXX_SPECS picolibc.specs)
# virt: RAM at 0x80000000 (QEMU's default 128 MiB); the image's "flash" is
# the first 4 MiB of it, its RAM the next 4 MiB; 16 KiB reserved stack.
set(BLUR_BARE_METAL_FLASH 0x80000000)
set(BLUR_BARE_METAL_FLASH_SIZE 0x400000)
set(BLUR_BARE_METAL_RAM 0x80400000)
set(BLUR_BARE_METAL_RAM_SIZE 0x400000)
set(BLUR_BARE_METAL_STACK_SIZE 0x4000)
set(BLUR_BARE_METAL_CRT0 semihost)
set(BLUR_BARE_METAL_QEMU qemu-system-riscv32 -M virt -bios none)
include(${CMAKE_CURRENT_LIST_DIR}/bare-metal-common.cmake)
