# Cortex-M4 (ARMv7E-M, soft float); tests run on QEMU's mps2-an386 board
# (the MPS2 memory map: 4 MiB flash at 0, 4 MiB RAM at 0x20000000; 16 KiB
# reserved stack).
set(BLUR_CORTEX_M_TARGET m4)
set(BLUR_CORTEX_M_CPU "-mcpu=cortex-m4 -mthumb -mfloat-abi=soft")
set(BLUR_CORTEX_M_QEMU -M mps2-an386 -cpu cortex-m4)
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m-common.cmake)
