# Run as a script (cmake -P) at build time: writes a C++ source holding the
# bytes of some files, so a program ships them inside its binary.
#
#   cmake -DOUTPUT=out.cpp -DHEADER=dashboard/embedded_file.h (declares the table; EmbeddedFile is server/embedded_file.h's)
#         -DTABLE=kDashboardFiles -DNAMESPACE=blur::collector
#         "-DFILES=name|content-type|path;..." -P embed_files.cmake
#
# Each file becomes an unsigned char array; the table lists
# {name, content type (text/* gets "; charset=utf-8"), ETag (a SHA-256 prefix of the bytes), bytes}.
foreach(required OUTPUT HEADER TABLE NAMESPACE FILES)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "embed_files.cmake: -D${required}=... is required")
  endif()
endforeach()

string(REPEAT "0x..," 32 line_pattern)
set(arrays "")
set(rows "")
set(index 0)
foreach(entry IN LISTS FILES)
  string(REPLACE "|" ";" parts "${entry}")
  list(LENGTH parts count)
  if(NOT count EQUAL 3)
    message(FATAL_ERROR "embed_files.cmake: '${entry}' is not name|content-type|path")
  endif()
  list(GET parts 0 name)
  list(GET parts 1 content_type)
  list(GET parts 2 path)
  if(content_type MATCHES "^text/")  # the project's text files are UTF-8
    string(APPEND content_type "; charset=utf-8")
  endif()
  if(NOT EXISTS "${path}")
    message(FATAL_ERROR "embed_files.cmake: ${path} does not exist")
  endif()
  file(READ "${path}" hex HEX)
  file(SIZE "${path}" size)
  file(SHA256 "${path}" digest)
  string(SUBSTRING "${digest}" 0 20 etag)
  # 32 bytes a line, each as 0xNN (CMake's regexes have no {n}).
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  string(REGEX REPLACE "(${line_pattern})" "\\1\n    " bytes "${bytes}")
  string(APPEND arrays "// ${name}\nconst unsigned char kFile${index}[] = {\n    ${bytes}0};\n")
  string(APPEND rows "    {\"${name}\", \"${content_type}\", \"\\\"${etag}\\\"\",\n"
                     "     std::string_view(reinterpret_cast<const char*>(kFile${index}), ${size})},\n")
  math(EXPR index "${index} + 1")
endforeach()

set(text "// Generated at build time by cmake/embed_files.cmake; do not edit.
#include \"${HEADER}\"

namespace ${NAMESPACE} {

namespace {
${arrays}}  // namespace

const EmbeddedFile ${TABLE}[] = {
${rows}};
const std::size_t ${TABLE}Count = ${index};

}  // namespace ${NAMESPACE}
")
# Rewritten only when changed, so an unchanged file compiles no more.
file(CONFIGURE OUTPUT "${OUTPUT}" CONTENT "${text}" @ONLY)
