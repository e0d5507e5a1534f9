# The firmware size budgets of every microcontroller target, in one place.
# The target is the toolchain file's BLUR_FIRMWARE_TARGET; per target:
#   BLUR_SDK_FLASH_BUDGET_<target>_MINIMAL, _SIX: flash of the SDK's own
#     code (libblur_sdk + libblur_client, or with BLUR_SDK_LTO the link-time
#     partitions GCC compiled them into, summed from the linker map by
#     size_breakdown.py) in the minimal and the six-mechanism image;
#   BLUR_IMAGE_FLASH_BUDGET_<target>, BLUR_IMAGE_RAM_BUDGET_<target> (where
#     a target has them): the whole minimal image on the smallest part it
#     aims at: flash = code + read-only data + .data's load image; RAM =
#     .data + .bss + the peak stack measured by running the image under
#     QEMU (the RAM array standing in for flash on QEMU is not counted).
# `firmware-size` and the test firmware.size_budgets fail when an image
# passes a budget of its target.
set(BLUR_SDK_FLASH_MARGIN 256)

# The goal of issue 30: the minimal image's SDK code at most 8,192 B on
# the Thumb-2 targets (Cortex-M4, M33, M7), the six-mechanism image's no
# larger than before issue 30 (14,470 B). Cortex-M4 measured 10,556 B
# before issue 30, 9,314 B after its first size round, 8,756 B after the
# second (BlockLog, the ledger loaded in place) and 8,160 B with the SDK's
# code link-time optimized as well (BLUR_SDK_LTO,
# cmake/BlurClientLibrary.cmake); steps: README, "Firmware size, issue 30".
# Every budget is the size measured then plus one margin, so growth fails at
# once; where that would pass the 8,192 B goal, the goal is the budget.
set(BLUR_SDK_THUMB2_MINIMAL_GOAL 8192)
function(_blur_capped_budget name measured)
  math(EXPR _budget "${measured} + ${BLUR_SDK_FLASH_MARGIN}")
  if(_budget GREATER BLUR_SDK_THUMB2_MINIMAL_GOAL)
    set(_budget ${BLUR_SDK_THUMB2_MINIMAL_GOAL})
  endif()
  set(${name} ${_budget} PARENT_SCOPE)
endfunction()

# Cortex-M4: 8,160 / 10,892 B measured.
_blur_capped_budget(BLUR_SDK_FLASH_BUDGET_m4_MINIMAL 8160)
math(EXPR BLUR_SDK_FLASH_BUDGET_m4_SIX "10892 + ${BLUR_SDK_FLASH_MARGIN}")

# Cortex-M0+ (Thumb-1 code is larger; 64-bit multiply and divide are
# calls): 8,718 / 11,604 B measured; the whole minimal image on a
# 32 KiB-flash, 8 KiB-RAM part:
math(EXPR BLUR_SDK_FLASH_BUDGET_m0plus_MINIMAL "8718 + ${BLUR_SDK_FLASH_MARGIN}")
math(EXPR BLUR_SDK_FLASH_BUDGET_m0plus_SIX "11604 + ${BLUR_SDK_FLASH_MARGIN}")
set(BLUR_IMAGE_FLASH_BUDGET_m0plus 32768)
set(BLUR_IMAGE_RAM_BUDGET_m0plus 8192)

# Cortex-M33 and Cortex-M7: 8,162 / 10,890 B and 8,168 / 10,916 B measured.
_blur_capped_budget(BLUR_SDK_FLASH_BUDGET_m33_MINIMAL 8162)
math(EXPR BLUR_SDK_FLASH_BUDGET_m33_SIX "10890 + ${BLUR_SDK_FLASH_MARGIN}")
_blur_capped_budget(BLUR_SDK_FLASH_BUDGET_m7_MINIMAL 8168)
math(EXPR BLUR_SDK_FLASH_BUDGET_m7_SIX "10916 + ${BLUR_SDK_FLASH_MARGIN}")

# RISC-V 32 (rv32imac; RV32C code is larger than Thumb-2's): 9,736 /
# 12,878 B measured.
math(EXPR BLUR_SDK_FLASH_BUDGET_riscv_MINIMAL "9736 + ${BLUR_SDK_FLASH_MARGIN}")
math(EXPR BLUR_SDK_FLASH_BUDGET_riscv_SIX "12878 + ${BLUR_SDK_FLASH_MARGIN}")

# The size_breakdown.py command for this target's images (firmware-size and
# firmware.size_budgets run it). A target without budgets fails the check.
set(_t ${BLUR_FIRMWARE_TARGET})
if(NOT DEFINED BLUR_SDK_FLASH_BUDGET_${_t}_MINIMAL)
  message(WARNING "No size budgets for firmware target '${_t}' (size_budgets.cmake)")
endif()
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(_dir ${PROJECT_BINARY_DIR}/examples/firmware-m4)
set(BLUR_SIZE_BREAKDOWN_COMMAND ${Python3_EXECUTABLE}
    ${CMAKE_CURRENT_LIST_DIR}/size_breakdown.py
    --budget blur-firmware-${_t}-minimal=${BLUR_SDK_FLASH_BUDGET_${_t}_MINIMAL}
    --budget blur-firmware-${_t}=${BLUR_SDK_FLASH_BUDGET_${_t}_SIX})
if(DEFINED BLUR_IMAGE_FLASH_BUDGET_${_t})
  string(JOIN " " _emulator ${BLUR_FIRMWARE_EMULATOR})
  list(APPEND BLUR_SIZE_BREAKDOWN_COMMAND
       --image-budget
       blur-firmware-${_t}-minimal=${BLUR_IMAGE_FLASH_BUDGET_${_t}},${BLUR_IMAGE_RAM_BUDGET_${_t}}
       --emulator "${_emulator}")
endif()
list(APPEND BLUR_SIZE_BREAKDOWN_COMMAND
     ${_dir}/blur-firmware-${_t}-minimal.map ${_dir}/blur-firmware-${_t}.map)
