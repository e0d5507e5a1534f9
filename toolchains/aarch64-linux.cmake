# aarch64 Linux (phones, gateways) with Debian's cross g++; tests run under
# qemu-user with the cross sysroot.
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(BLUR_CROSS_TRIPLE aarch64-linux-gnu)
set(BLUR_CROSS_QEMU qemu-aarch64)
# What `readelf -h` must show for the JNI library (examples.jni_library).
set(BLUR_JNI_ELF_HEADER "Class: +ELF64" "little endian" "Machine: +AArch64")
include(${CMAKE_CURRENT_LIST_DIR}/linux-cross.cmake)
