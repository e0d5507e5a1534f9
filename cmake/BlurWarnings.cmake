# Warnings as errors for Blur's own targets (never for third-party code).
function(blur_strict target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -Wshadow
    $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor -Wold-style-cast>)
endfunction()

# Device code: the rules the Cortex-M build proves, enforced on every target.
function(blur_device_code target)
  blur_strict(${target})
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions -fno-rtti>
    -Wdouble-promotion -Wfloat-conversion)
endfunction()
