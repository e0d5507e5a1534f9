# 32-bit Arm Linux (ARMv7-A, hard float: Android's armeabi-v7a class),
# Debian's cross g++; tests run under qemu-arm with the cross sysroot.
set(CMAKE_SYSTEM_PROCESSOR armv7l)
set(BLUR_CROSS_TRIPLE arm-linux-gnueabihf)
set(BLUR_CROSS_QEMU qemu-arm)
# What `readelf -h` must show for the JNI library (examples.jni_library).
set(BLUR_JNI_ELF_HEADER "Class: +ELF32" "little endian" "Machine: +ARM$" "hard-float ABI")
include(${CMAKE_CURRENT_LIST_DIR}/linux-cross.cmake)
