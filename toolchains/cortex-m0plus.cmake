# Cortex-M0+ (ARMv6-M: no hardware divide, no 32x32->64 multiply, no
# unaligned access). QEMU 7.2 models no Cortex-M0+, and its mps2-an385
# board refuses `-cpu cortex-m0` (it takes its Cortex-M3 only). So:
# - the tests run the ARMv6-M code on mps2-an385's Cortex-M3 (4 MiB of
#   flash at 0 and of RAM at 0x20000000, which they need; the M3 executes
#   the ARMv6-M instruction set unchanged, but does not trap unaligned
#   accesses as an M0+ does);
# - the firmware example's images run on the BBC micro:bit model (nRF51822:
#   a real Cortex-M0, which traps unaligned accesses; 256 KiB flash at 0,
#   16 KiB RAM at 0x20000000) and link for its memory.
# 4 KiB reserved stack; picolibc's start-up without the semihosting command
# line (its 1.3 KiB of buffers would not fit an 8 KiB part).
set(BLUR_CORTEX_M_TARGET m0plus)
set(BLUR_CORTEX_M_CPU "-mcpu=cortex-m0plus -mthumb -mfloat-abi=soft")
set(BLUR_CORTEX_M_STACK_SIZE 0x1000)
set(BLUR_CORTEX_M_QEMU -M mps2-an385)
set(BLUR_CORTEX_M_FIRMWARE_QEMU -M microbit)
set(BLUR_CORTEX_M_FIRMWARE_MEMORY -Wl,--defsym=__flash_size=0x40000 -Wl,--defsym=__ram_size=0x4000)
set(BLUR_CORTEX_M_CRT0 hosted)
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m-common.cmake)
