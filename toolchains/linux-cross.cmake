# Linux on another CPU with Debian's cross g++ (g++-<triple>): the target's
# toolchain file sets BLUR_CROSS_TRIPLE (the compiler prefix and the sysroot
# under /usr) and BLUR_CROSS_QEMU (the qemu-user program that runs its tests
# with that sysroot), then includes this file.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_C_COMPILER ${BLUR_CROSS_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${BLUR_CROSS_TRIPLE}-g++)
set(CMAKE_FIND_ROOT_PATH /usr/${BLUR_CROSS_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(BLUR_PLATFORM linux-cross CACHE STRING "Blur target platform" FORCE)

set(CMAKE_CROSSCOMPILING_EMULATOR ${BLUR_CROSS_QEMU} -L /usr/${BLUR_CROSS_TRIPLE})
