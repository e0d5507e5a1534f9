// libFuzzer: the server's configuration file (config/server_file.h) with
// serve's real table of settings (cli/serve_settings.cpp), TOML parsed by
// toml++ with exceptions on. Any text: no exception escapes; a refusal is
// kInvalid naming the file and sets no field (the options print as the
// defaults do); a taken file sets only known settings, each within its
// range, and valid metrics with unique ids; and the options written back
// as a server file (every key explicit) read back to the same text.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>

#include "cli/serve_options.h"
#include "config/metric_rules.h"
#include "config/server_file.h"

namespace {

using namespace blur::collector;

Outcome<ServerFile> parse(const std::string& text, const std::vector<Setting>& settings) {
  try {
    return parse_server_toml(text, "fuzz.toml", settings);
  } catch (...) {
    __builtin_trap();  // the parser answers with an error, never throws
  }
}

bool in_range(const Setting& s) {
  return std::visit(
      [&](auto* field) {
        using T = std::remove_pointer_t<decltype(field)>;
        if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::string>) {
          return true;
        } else {
          const double value = static_cast<double>(*field);
          return std::isfinite(value) && value >= s.min && value <= s.max;
        }
      },
      s.field);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  static const std::string default_text = [] {
    ServeOptions defaults;
    return server_toml(serve_settings(defaults), {});
  }();
  ServeOptions options;
  const std::vector<Setting> settings = serve_settings(options);
  const auto file = parse(text, settings);
  if (!file) {
    if (file.error().kind != Error::Kind::kInvalid) __builtin_trap();
    if (file.error().message.find("fuzz.toml") == std::string::npos) __builtin_trap();
    if (server_toml(settings, {}) != default_text) __builtin_trap();  // nothing set
    return 0;
  }
  std::set<size_t> given;
  for (size_t i : file->given) {
    if (i >= settings.size() || !given.insert(i).second) __builtin_trap();
    if (!in_range(settings[i])) __builtin_trap();
  }
  std::set<uint32_t> ids;
  for (const MetricConfig& m : file->metrics) {
    if (!ids.insert(m.id).second || !check_metric(m).empty()) __builtin_trap();
  }
  const std::string written = server_toml(settings, file->metrics);
  ServeOptions again;
  const std::vector<Setting> again_settings = serve_settings(again);
  const auto reread = parse(written, again_settings);
  if (!reread || reread->given.size() != settings.size()) __builtin_trap();
  if (server_toml(again_settings, reread->metrics) != written) __builtin_trap();
  return 0;
}
