# Cortex-M4 (ARMv7E-M, soft float); tests run on QEMU's mps2-an386 board.
# mps2-an386: 4 MiB flash at 0, 4 MiB RAM at 0x20000000; 16 KiB reserved stack.
set(BLUR_CORTEX_M_TARGET m4)
set(BLUR_CORTEX_M_CPU "-mcpu=cortex-m4 -mthumb -mfloat-abi=soft")
set(BLUR_CORTEX_M_FLASH 0x0)
set(BLUR_CORTEX_M_FLASH_SIZE 0x400000)
set(BLUR_CORTEX_M_RAM 0x20000000)
set(BLUR_CORTEX_M_RAM_SIZE 0x400000)
set(BLUR_CORTEX_M_STACK_SIZE 0x4000)
set(BLUR_CORTEX_M_QEMU -M mps2-an386 -cpu cortex-m4)
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m-common.cmake)
