# nanopb and mbedTLS, compiled for the current target from the Debian source
# packages that toolchains/setup.sh unpacks into BLUR_DEPS_DIR. Every target
# (host included) builds the same sources with the same configuration, so the
# code the host tests exercise is the code that ships on the device.

set(BLUR_DEPS_DIR "${PROJECT_SOURCE_DIR}/.deps" CACHE PATH
    "Where toolchains/setup.sh unpacked the nanopb and mbedTLS sources")

foreach(_dep nanopb mbedtls)
  if(NOT EXISTS "${BLUR_DEPS_DIR}/${_dep}/.blur-extracted")
    message(FATAL_ERROR
      "${_dep} sources not found in ${BLUR_DEPS_DIR}/${_dep}.\n"
      "Run toolchains/setup.sh (as root) first; it fetches Debian's source packages.")
  endif()
endforeach()

# --- mbedTLS ------------------------------------------------------------------
# Devices (bare metal): entropy + CTR_DRBG + AES + SHA-256, nothing else
# (sdk/config/blur_mbedtls_config.h). Hosts and Linux devices: mbedTLS's
# default configuration, TLS included for ports/posix's HTTPS transport,
# with the device build's entropy rules (sdk/config/blur_mbedtls_host.h), so
# the DRBG gives the same bytes for the same seed on every target.
set(_mbed "${BLUR_DEPS_DIR}/mbedtls")
if(BLUR_BARE_METAL)
  add_library(blur_mbedtls STATIC
    ${_mbed}/library/aes.c
    ${_mbed}/library/aesni.c
    ${_mbed}/library/ctr_drbg.c
    ${_mbed}/library/entropy.c
    ${_mbed}/library/sha256.c
    ${_mbed}/library/platform_util.c
    ${PROJECT_SOURCE_DIR}/sdk/config/blur_aes_decrypt_refused.c)
  # mbedTLS 2.28.3 has no MBEDTLS_CONFIG_FILE cache variable: pass the define.
  target_compile_definitions(blur_mbedtls PUBLIC
    MBEDTLS_CONFIG_FILE=<blur_mbedtls_config.h>)
else()
  file(GLOB _mbed_sources ${_mbed}/library/*.c)
  add_library(blur_mbedtls STATIC ${_mbed_sources})
  target_compile_definitions(blur_mbedtls PUBLIC
    MBEDTLS_USER_CONFIG_FILE=<blur_mbedtls_host.h>)
endif()
# (The <> form of the configuration defines survives pkg-config's flags
# in a shell, where quotes would not.)
target_include_directories(blur_mbedtls SYSTEM PUBLIC
  $<BUILD_INTERFACE:${_mbed}/include> $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/sdk/config>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/blur/third_party>)

# --- nanopb runtime ---------------------------------------------------------
set(_pb "${BLUR_DEPS_DIR}/nanopb")
add_library(blur_nanopb STATIC
  ${_pb}/pb_common.c ${_pb}/pb_encode.c ${_pb}/pb_decode.c)
target_include_directories(blur_nanopb SYSTEM PUBLIC
  $<BUILD_INTERFACE:${_pb}> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/blur/third_party>)
# Bare metal: the SDK reads only nanopb's true/false, never its error
# strings, so they are left out of the flash (~200 B). Hosts keep them: the
# collector's decoder quotes them.
if(BLUR_BARE_METAL)
  target_compile_definitions(blur_nanopb PUBLIC PB_NO_ERRMSG)
endif()

# --- the wire schema, generated with Debian's nanopb generator -------------
find_program(BLUR_NANOPB_GENERATOR nanopb_generator.py REQUIRED)
find_program(BLUR_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH REQUIRED)
set(_proto_dir "${PROJECT_SOURCE_DIR}/sdk/proto")
set(_gen_dir "${PROJECT_BINARY_DIR}/generated")
add_custom_command(
  OUTPUT ${_gen_dir}/blur.pb.c ${_gen_dir}/blur.pb.h
  COMMAND ${CMAKE_COMMAND} -E make_directory ${_gen_dir}
  COMMAND ${BLUR_PYTHON3} ${BLUR_NANOPB_GENERATOR} -q
          -I ${_proto_dir} -f ${_proto_dir}/blur.options -D ${_gen_dir}
          ${_proto_dir}/blur.proto
  DEPENDS ${_proto_dir}/blur.proto ${_proto_dir}/blur.options
  COMMENT "nanopb: generating the wire schema")
add_library(blur_proto STATIC ${_gen_dir}/blur.pb.c)
target_include_directories(blur_proto PUBLIC
  $<BUILD_INTERFACE:${_gen_dir}> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/blur/proto>)
target_link_libraries(blur_proto PUBLIC blur_nanopb)

foreach(_dep mbedtls nanopb proto)
  add_library(blur::${_dep} ALIAS blur_${_dep})
  set_target_properties(blur_${_dep} PROPERTIES EXPORT_NAME ${_dep})
endforeach()
