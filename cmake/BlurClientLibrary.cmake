# blur_client_library(): the Client and the C API with a chosen set of
# mechanisms. The same file serves the source tree (sdk/CMakeLists.txt) and
# the installed package (blurConfig.cmake), which set:
#   BLUR_SDK_INCLUDE_DIR  the directory holding blur/ (public headers)
#   BLUR_SDK_SOURCE_DIR   the SDK's sources (src/ in the tree, share/blur/src installed)
#   BLUR_SDK_SOURCE_FILES their names, but the Client's and the C API's
# and provide the targets blur::sdk, blur::mbedtls and blur::proto.

# The mechanisms' names and ids, read from the one table.
function(blur_mechanism_names out_names out_ids)
  file(READ ${BLUR_SDK_INCLUDE_DIR}/blur/mechanisms/mechanism_table.h _table)
  string(REGEX MATCHALL "\n  X\\([0-9]+, [A-Za-z]+, [a-z]+," _lines "${_table}")
  set(_names "")
  set(_ids "")
  foreach(_line IN LISTS _lines)
    string(REGEX MATCH "X\\(([0-9]+), [A-Za-z]+, ([a-z]+)," _ "${_line}")
    list(APPEND _ids ${CMAKE_MATCH_1})
    list(APPEND _names ${CMAKE_MATCH_2})
  endforeach()
  list(LENGTH _names _count)
  if(_count LESS 10)
    message(FATAL_ERROR "could not read the mechanism table (found ${_count}: ${_names})")
  endif()
  set(${out_names} ${_names} PARENT_SCOPE)
  set(${out_ids} ${_ids} PARENT_SCOPE)
endfunction()

# The rules device code compiles under: no exceptions, no RTTI. In the
# source tree also Blur's warnings as errors (blur_device_code); a
# consumer's compiler may warn differently, so the package does not impose
# -Werror on it.
function(_blur_device_rules target)
  if(COMMAND blur_device_code)
    blur_device_code(${target})
  else()
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-fno-exceptions -fno-rtti>)
  endif()
  # Built for size with GCC: no IPA-SRA (its split copies of functions with
  # pointer arguments cost the minimal Cortex-M4 SDK 26 B more than they save).
  target_compile_options(${target} PRIVATE
    $<$<AND:$<CXX_COMPILER_ID:GNU>,$<CONFIG:MinSizeRel>>:-fno-ipa-sra>)
  _blur_sdk_lto(${target})
endfunction()

# Link-time optimization of the SDK's own code (BLUR_SDK_LTO, on for
# bare-metal builds with GCC; MinSizeRel only): the SDK's objects carry
# GCC's intermediate code (archived with gcc-ar), and a program linking
# them is linked with -flto, so GCC optimizes the SDK as one unit (inlines
# across its files, drops what the program never reaches). Only the SDK's
# objects: mbedTLS, nanopb, the port and the program's own code stay
# machine code, so nothing of theirs is inlined into the SDK or the other
# way round (size_breakdown.py attributes the link-time partitions to the
# SDK).
function(_blur_sdk_lto target)
  if(NOT BLUR_SDK_LTO)
    return()
  endif()
  set_property(TARGET ${target} PROPERTY INTERPROCEDURAL_OPTIMIZATION_MINSIZEREL ON)
  target_link_options(${target} INTERFACE $<$<CONFIG:MinSizeRel>:-flto>)
  # Fat objects (machine code beside the intermediate code): an installed
  # SDK archive also links without link-time optimization (-fno-lto), e.g.
  # into a firmware built by another GCC release; the size is the same.
  target_compile_options(${target} PRIVATE $<$<CONFIG:MinSizeRel>:-ffat-lto-objects>)
  # GCC names some of a file's symbols in its intermediate code from a
  # random number unless given a seed; the link-time inliner's choices
  # follow those names, so without one the same SDK came out 8,692 to
  # 8,786 B from one compile to the next. One seed per file, from its name.
  get_target_property(_sources ${target} SOURCES)
  foreach(_source IN LISTS _sources)
    get_filename_component(_name ${_source} NAME)
    get_property(_options SOURCE ${_source} TARGET_DIRECTORY ${target} PROPERTY COMPILE_OPTIONS)
    if(NOT "-frandom-seed=blur-${_name}" IN_LIST _options)
      set_property(SOURCE ${_source} TARGET_DIRECTORY ${target} APPEND
                   PROPERTY COMPILE_OPTIONS -frandom-seed=blur-${_name})
    endif()
  endforeach()
endfunction()

# Include directories, dependencies, device-code rules and the
# configuration header (if `config_file` is not empty) of a whole SDK
# library compiled from BLUR_SDK_SOURCE_DIR.
function(blur_sdk_setup target config_file)
  target_include_directories(${target}
    PUBLIC $<BUILD_INTERFACE:${BLUR_SDK_INCLUDE_DIR}>
    PRIVATE ${BLUR_SDK_SOURCE_DIR})
  target_link_libraries(${target} PUBLIC blur::mbedtls PRIVATE blur::proto)
  _blur_device_rules(${target})
  if(config_file)
    if(NOT EXISTS "${config_file}")
      message(FATAL_ERROR "${target}: configuration file ${config_file} not found")
    endif()
    target_compile_definitions(${target} PUBLIC "$<BUILD_INTERFACE:BLUR_CONFIG_FILE=\"${config_file}\">")
  endif()
endfunction()

# The Client and the C API over it, with a chosen set of mechanisms:
#   blur_client_library(<target> [MECHANISMS <names from blur/mechanisms/mechanism_table.h>]
#                       [NO_MEMOIZATION] [NO_OBSERVED_TIME] [CONFIG_FILE <header>])
# Without MECHANISMS every mechanism is built. A device links one of these
# (and never two: they define the same symbols); add_metric answers
# kNotBuilt for a mechanism that was left out. The options become -D
# definitions that config.h respects, so CONFIG_FILE must not set those
# knobs too. CONFIG_FILE (relative to the calling directory): a
# configuration other than blur::sdk's, which resizes the SDK's objects, so
# the whole SDK is compiled into <target>: link it instead of blur::sdk (and
# of anything linking blur::sdk, such as the ports).
function(blur_client_library target)
  cmake_parse_arguments(ARG "NO_MEMOIZATION;NO_OBSERVED_TIME" "CONFIG_FILE" "MECHANISMS" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "blur_client_library: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  blur_mechanism_names(_names _ids)
  set(_client_sources ${BLUR_SDK_SOURCE_DIR}/client.cpp ${BLUR_SDK_SOURCE_DIR}/c_api.cpp)
  if(ARG_CONFIG_FILE)
    get_filename_component(_config "${ARG_CONFIG_FILE}" ABSOLUTE)
    list(TRANSFORM BLUR_SDK_SOURCE_FILES PREPEND ${BLUR_SDK_SOURCE_DIR}/ OUTPUT_VARIABLE _sdk_sources)
    add_library(${target} STATIC ${_sdk_sources} ${_client_sources})
    blur_sdk_setup(${target} "${_config}")
  else()
    add_library(${target} STATIC ${_client_sources})
    target_link_libraries(${target} PUBLIC blur::sdk PRIVATE blur::proto)
    # (The SDK's internal headers: the Client's report encoder, report_wire.h.)
    target_include_directories(${target} PRIVATE ${BLUR_SDK_SOURCE_DIR})
    _blur_device_rules(${target})
  endif()
  if(ARG_MECHANISMS)
    set(_set 0)
    foreach(_name IN LISTS ARG_MECHANISMS)
      list(FIND _names ${_name} _index)
      if(_index LESS 0)
        message(FATAL_ERROR "blur_client_library: unknown mechanism '${_name}' (one of: ${_names})")
      endif()
      list(GET _ids ${_index} _id)
      math(EXPR _set "${_set} | (1 << ${_id})" OUTPUT_FORMAT HEXADECIMAL)
    endforeach()
    target_compile_definitions(${target} PUBLIC BLUR_MECHANISM_SET=${_set}u)
  endif()
  if(ARG_NO_OBSERVED_TIME)
    target_compile_definitions(${target} PUBLIC BLUR_OBSERVED_TIME=0)
  endif()
  if(ARG_NO_MEMOIZATION)
    target_compile_definitions(${target} PUBLIC BLUR_MEMOIZATION=0)
  endif()
endfunction()
