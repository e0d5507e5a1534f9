// The dashboard's files (collector/web/ and Chart.js), built into the
// binary (server/embedded_file.h).
#ifndef BLUR_COLLECTOR_DASHBOARD_EMBEDDED_FILE_H
#define BLUR_COLLECTOR_DASHBOARD_EMBEDDED_FILE_H

#include <cstddef>
#include <string_view>

#include "server/embedded_file.h"

namespace blur::collector {

// The dashboard's files (dashboard_files.cpp, generated).
extern const EmbeddedFile kDashboardFiles[];
extern const std::size_t kDashboardFilesCount;

// The dashboard file called `name`, or nullptr.
const EmbeddedFile* find_dashboard_file(std::string_view name);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_DASHBOARD_EMBEDDED_FILE_H
