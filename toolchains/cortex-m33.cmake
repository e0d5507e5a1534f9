# Cortex-M33 (ARMv8-M Mainline with TrustZone, soft float); tests run on
# QEMU's mps2-an505 board, which boots in the secure state: images link at
# the secure aliases of its memory (code SSRAM at 0x10000000, 4 MiB; data
# SSRAM at 0x38000000, 4 MiB). The non-secure aliases (0x00000000 and
# 0x28000000) are BLUR_CORTEX_M_NS_FLASH / _NS_RAM: the firmware example's
# non-secure build (blur-firmware-m33-ns) links there. 16 KiB reserved stack
# (sizes: the MPS2 defaults of cortex-m-common.cmake).
set(BLUR_CORTEX_M_TARGET m33)
set(BLUR_CORTEX_M_CPU "-mcpu=cortex-m33 -mthumb -mfloat-abi=soft")
set(BLUR_CORTEX_M_FLASH 0x10000000)
set(BLUR_CORTEX_M_RAM 0x38000000)
set(BLUR_CORTEX_M_NS_FLASH 0x00000000 CACHE STRING "Non-secure alias of the code memory" FORCE)
set(BLUR_CORTEX_M_NS_RAM 0x28000000 CACHE STRING "Non-secure alias of the data memory" FORCE)
set(BLUR_CORTEX_M_QEMU -M mps2-an505 -cpu cortex-m33)
include(${CMAKE_CURRENT_LIST_DIR}/cortex-m-common.cmake)
