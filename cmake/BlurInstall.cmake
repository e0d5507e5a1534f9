# `cmake --install` and find_package(blur): the SDK as a package.
#
#   include/blur/...              the public headers (sdk/include/blur)
#   include/blur/ports/           the ports' headers (sim, emulated flash, posix or cortex-m)
#   include/blur/proto/blur.pb.h  the generated wire schema
#   include/blur/third_party/     nanopb's and mbedTLS's headers and the mbedTLS
#                                 configuration the SDK was built with
#   lib/libblur_*.a               the libraries (blur::sdk, blur::client, ...)
#   lib/cmake/blur/               blurConfig.cmake, its version file, the targets and
#                                 blur_client_library()
#   lib/pkgconfig/blur.pc         pkg-config (not for bare-metal builds)
#   share/blur/src/               the SDK's sources, which blur_client_library() compiles
#   share/doc/blur/               README, CHANGELOG, LICENSE, NOTICE
#
# nanopb and mbedTLS are installed with Blur, as blur::nanopb and
# blur::mbedtls, under Blur's own include directory: the SDK's objects
# embed mbedTLS's CTR_DRBG context, whose layout depends on the mbedTLS
# configuration (sdk/config/), and its encoder on nanopb's options; a system
# copy with another configuration would compile and then misbehave.
include(CMakePackageConfigHelpers)

set(_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/blur)
set(BLUR_INSTALL_SOURCEDIR ${CMAKE_INSTALL_DATADIR}/blur/src)
set(_third_party ${CMAKE_INSTALL_INCLUDEDIR}/blur/third_party)

install(TARGETS blur_sdk blur_client blur_proto blur_nanopb blur_mbedtls ${BLUR_PORT_TARGETS}
        EXPORT blur-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT blur-targets NAMESPACE blur:: FILE blurTargets.cmake DESTINATION ${_cmake_dir})

install(DIRECTORY ${PROJECT_SOURCE_DIR}/sdk/include/blur DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
if(BLUR_CONFIG_FILE_PATH)
  install(FILES ${BLUR_CONFIG_FILE_PATH} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/blur
          RENAME build_config.h)
endif()
foreach(_target IN LISTS BLUR_PORT_TARGETS)
  get_target_property(_sources ${_target} SOURCES)
  get_target_property(_dir ${_target} SOURCE_DIR)
  foreach(_source IN LISTS _sources)
    get_filename_component(_source_dir ${_dir}/${_source} DIRECTORY)
    file(GLOB _headers ${_source_dir}/*.h)
    install(FILES ${_headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/blur/ports)
  endforeach()
endforeach()
install(FILES ${PROJECT_BINARY_DIR}/generated/blur.pb.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/blur/proto)
install(FILES ${BLUR_DEPS_DIR}/nanopb/pb.h ${BLUR_DEPS_DIR}/nanopb/pb_common.h
              ${BLUR_DEPS_DIR}/nanopb/pb_encode.h ${BLUR_DEPS_DIR}/nanopb/pb_decode.h
              ${PROJECT_SOURCE_DIR}/sdk/config/blur_mbedtls_config.h
              ${PROJECT_SOURCE_DIR}/sdk/config/blur_mbedtls_host.h
        DESTINATION ${_third_party})
install(DIRECTORY ${BLUR_DEPS_DIR}/mbedtls/include/ DESTINATION ${_third_party}
        FILES_MATCHING PATTERN "*.h")

install(DIRECTORY ${PROJECT_SOURCE_DIR}/sdk/src/ DESTINATION ${BLUR_INSTALL_SOURCEDIR}
        FILES_MATCHING PATTERN "*.cpp" PATTERN "*.h" PATTERN "*.inc")
install(FILES ${PROJECT_SOURCE_DIR}/cmake/BlurClientLibrary.cmake DESTINATION ${_cmake_dir})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/blurConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/blurConfig.cmake
  INSTALL_DESTINATION ${_cmake_dir}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR BLUR_INSTALL_SOURCEDIR)
# 0.x: a minor release may change the API (semantic versioning before 1.0),
# so find_package(blur 0.1) accepts 0.1.z only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/blurConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/blurConfig.cmake
              ${PROJECT_BINARY_DIR}/package/blurConfigVersion.cmake
        DESTINATION ${_cmake_dir})

if(NOT BLUR_BARE_METAL)
  # The mbedTLS configuration define is in its <> form so that it survives
  # `cc $(pkg-config --cflags blur)`.
  get_target_property(_mbedtls_defines blur_mbedtls INTERFACE_COMPILE_DEFINITIONS)
  set(BLUR_PC_CFLAGS "")
  foreach(_define IN LISTS _mbedtls_defines)
    string(APPEND BLUR_PC_CFLAGS " -D${_define}")
  endforeach()
  if(BLUR_CONFIG_FILE_PATH)
    string(APPEND BLUR_PC_CFLAGS " -DBLUR_CONFIG_FILE=<blur/build_config.h>")
  endif()
  # blur.pc finds its prefix from its own place (relocatable).
  file(RELATIVE_PATH BLUR_PC_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/blur.pc.in ${PROJECT_BINARY_DIR}/package/blur.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/package/blur.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()

install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/CHANGELOG.md
              ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/NOTICE
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${PROJECT_SOURCE_DIR}/sdk/include/blur/README.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR} RENAME headers.md)
