// A file built into a program's binary (cmake/embed_files.cmake writes a
// table of them at build time), so an installed collector serves its
// dashboard and its API description with nothing beside it and without a
// network; and its HTTP answer.
#ifndef BLUR_COLLECTOR_SERVER_EMBEDDED_FILE_H
#define BLUR_COLLECTOR_SERVER_EMBEDDED_FILE_H

#include <cstddef>
#include <string_view>

#include "server/http_server.h"

namespace blur::collector {

struct EmbeddedFile {
  std::string_view name;          // as served, e.g. "dashboard.js"
  std::string_view content_type;  // e.g. "text/javascript; charset=utf-8"
  std::string_view etag;          // quoted: a SHA-256 prefix of the bytes
  std::string_view bytes;
};

// `file` as the answer to `request`. Every answer says "Cache-Control:
// no-cache" with the file's ETag, so a client revalidates (If-None-Match ->
// 304, no body) and never keeps a copy older than the collector it talks to.
// An HTML page gets a Content-Security-Policy that lets it run only its own
// scripts and talk only to this collector.
http::Response embedded_file_response(const http::Request& request, const EmbeddedFile& file);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_SERVER_EMBEDDED_FILE_H
