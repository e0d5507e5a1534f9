// libFuzzer: the metrics configuration file (config/metrics_file.h), TOML
// parsed by toml++ with exceptions on, so the loader's try/catch is all that
// stands between a bad file and a crash at start. Any text: no exception
// escapes, a refusal names the file; a loaded list is non-empty with unique
// ids, every metric passes check_metric and survives the store's canonical
// JSON, and the list written back as TOML (every key explicit) loads to the
// same metrics.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "config/metric_rules.h"
#include "config/metrics_file.h"

namespace {

using namespace blur::collector;

Outcome<std::vector<MetricConfig>> load(const std::string& text) {
  try {
    return parse_metrics_toml(text, "fuzz.toml");
  } catch (...) {
    __builtin_trap();  // the loader answers with an error, never throws
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto metrics = load(text);
  if (!metrics) {
    if (metrics.error().kind != Error::Kind::kInvalid) __builtin_trap();
    if (metrics.error().message.rfind("fuzz.toml", 0) != 0) __builtin_trap();
    return 0;
  }
  if (metrics->empty()) __builtin_trap();
  std::set<uint32_t> ids;
  for (const MetricConfig& m : *metrics) {
    if (!ids.insert(m.id).second) __builtin_trap();
    if (!check_metric(m).empty()) __builtin_trap();
    const auto stored = config_from_text(config_to_text(m));
    if (!stored || stored.value() != m) __builtin_trap();
  }
  const auto again = load(metrics_toml(*metrics));
  if (!again || again.value() != metrics.value()) __builtin_trap();
  return 0;
}
