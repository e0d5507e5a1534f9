# Cortex-M7 (ARMv7E-M; soft float: the SDK uses no floating point, so its
# double-precision FPU stays off). Tests run on QEMU's mps2-an500 board (the
# MPS2 memory map: 4 MiB flash at 0, 4 MiB RAM at 0x20000000; 16 KiB
# reserved stack). The firmware turns the caches on
# (ports/bare-metal/cache.h); QEMU models none: CCR.DC and CCR.IC read as
# zero after they are set.
set(BLUR_CORTEX_M_TARGET m7)
set(BLUR_CORTEX_M_CPU "-mcpu=cortex-m7 -mthumb -mfloat-abi=soft")
set(BLUR_CORTEX_M_QEMU -M mps2-an500 -cpu cortex-m7)
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m-common.cmake)
