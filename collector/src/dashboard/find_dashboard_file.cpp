#include "dashboard/embedded_file.h"

namespace blur::collector {

const EmbeddedFile* find_dashboard_file(std::string_view name) {
  for (std::size_t i = 0; i < kDashboardFilesCount; ++i) {
    if (kDashboardFiles[i].name == name) return &kDashboardFiles[i];
  }
  return nullptr;
}

}  // namespace blur::collector
