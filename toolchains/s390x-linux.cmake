# s390x Linux: the big-endian target (64-bit, like the networking gear's
# big-endian cores in byte order), Debian's cross g++; tests run under
# qemu-s390x with the cross sysroot. The whole SDK suite runs here, and the
# cross-endianness vectors (tests/vectors/endian_be.hex) are written here.
set(CMAKE_SYSTEM_PROCESSOR s390x)
set(BLUR_CROSS_TRIPLE s390x-linux-gnu)
set(BLUR_CROSS_QEMU qemu-s390x)
# What `readelf -h` must show for the JNI library (examples.jni_library).
set(BLUR_JNI_ELF_HEADER "Class: +ELF64" "big endian" "Machine: +IBM S/390")
include(${CMAKE_CURRENT_LIST_DIR}/linux-cross.cmake)
