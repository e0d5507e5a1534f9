// A file built into the collector's binary (cmake/embed_files.cmake writes
// the table at build time), so an installed collector serves its dashboard
// with nothing beside it and without a network.
#ifndef BLUR_COLLECTOR_DASHBOARD_EMBEDDED_FILE_H
#define BLUR_COLLECTOR_DASHBOARD_EMBEDDED_FILE_H

#include <cstddef>
#include <string_view>

namespace blur::collector {

struct EmbeddedFile {
  std::string_view name;          // as served, e.g. "dashboard.js"
  std::string_view content_type;  // e.g. "text/javascript; charset=utf-8"
  std::string_view etag;          // quoted: a SHA-256 prefix of the bytes
  std::string_view bytes;
};

// The dashboard's files (dashboard_files.cpp, generated).
extern const EmbeddedFile kDashboardFiles[];
extern const std::size_t kDashboardFilesCount;

// The dashboard file called `name`, or nullptr.
const EmbeddedFile* find_dashboard_file(std::string_view name);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_DASHBOARD_EMBEDDED_FILE_H
