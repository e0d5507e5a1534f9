#include "observe/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "blur/version.h"

namespace blur::collector::observe {

namespace {

// Field `index` (1-based, as in proc(5)) of /proc/self/stat; 0 if unreadable.
// The command name (field 2) may hold spaces, so fields count from its ')'.
double stat_field(int index) {
  std::ifstream file("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  for (int i = 3; fields >> field; ++i) {
    if (i == index) return std::stod(field);
  }
  return 0;
}

double boot_time_seconds() {
  std::ifstream file("/proc/stat");
  std::string key;
  double value = 0;
  while (file >> key) {
    if (key == "btime") {
      file >> value;
      return value;
    }
    file.ignore(1 << 20, '\n');
  }
  return 0;
}

double open_fds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return 0;
  double count = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count - 1;  // not the descriptor reading the directory
}

}  // namespace

void register_process_metrics(Registry& registry) {
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  registry.counter_function("process_cpu_seconds_total", "User and system CPU time spent, seconds",
                            {}, [ticks] { return (stat_field(14) + stat_field(15)) / ticks; });
  registry.gauge_function("process_resident_memory_bytes", "Resident memory size in bytes", {},
                          [page] { return stat_field(24) * page; });
  registry.gauge_function("process_open_fds", "Open file descriptors", {}, open_fds);
  registry.gauge_function("process_max_fds", "The limit on open file descriptors", {}, [] {
    rlimit files{};
    return getrlimit(RLIMIT_NOFILE, &files) == 0 ? static_cast<double>(files.rlim_cur) : 0.0;
  });
  const double started = boot_time_seconds() + stat_field(22) / ticks;
  registry.gauge_function("process_start_time_seconds",
                          "Start time of the process since the Unix epoch, seconds", {},
                          [started] { return started; });
  const std::string version = std::to_string(blur::kSdkVersionMajor) + "." +
                              std::to_string(blur::kSdkVersionMinor) + "." +
                              std::to_string(blur::kSdkVersionPatch);
  registry.gauge_function("blur_collector_build_info",
                          "Always 1; the collector's version in its label", {{"version", version}},
                          [] { return 1.0; });
}

}  // namespace blur::collector::observe
