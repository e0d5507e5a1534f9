// libFuzzer: the `values` query parameter of the estimate and series routes
// (api/value_selection.h), straight from a URL. Any bytes, against a domain
// size taken from the input: no crash and no undefined behaviour; an
// accepted selection is exactly what a naive reading of the text selects
// (values and inclusive ranges, comma-separated, each below the domain
// size), ascending and each once; a refused one names the offending part.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "api/value_selection.h"

namespace {

using blur::collector::ValueSelection;

// Decimal digits only, below `domain`, at most 10 characters.
bool naive_value(std::string_view text, uint32_t domain, uint32_t* value) {
  if (text.empty() || text.size() > 10) return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  if (v >= domain) return false;
  *value = static_cast<uint32_t>(v);
  return true;
}

// The selection by marking each value of each range, or false if refused.
bool naive_selection(std::string_view text, uint32_t domain, std::vector<bool>* chosen) {
  chosen->assign(domain, false);
  size_t at = 0;
  for (;;) {
    const size_t comma = text.find(',', at);
    const std::string_view part =
        text.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    const size_t dash = part.find('-');
    uint32_t low = 0, high = 0;
    if (!naive_value(part.substr(0, dash), domain, &low)) return false;
    if (dash == std::string_view::npos) {
      high = low;
    } else if (!naive_value(part.substr(dash + 1), domain, &high)) {
      return false;
    }
    if (high < low) return false;
    for (uint32_t v = low; v <= high; ++v) (*chosen)[v] = true;
    if (comma == std::string_view::npos) return true;
    at = comma + 1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  // The first two bytes pick a domain of 0..65535 values (GRR's largest).
  const uint32_t domain = static_cast<uint32_t>(data[0]) << 8 | data[1];
  const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);
  const auto parsed = ValueSelection::parse(text, domain);
  // The naive reading marks each range value by value: long texts of wide
  // ranges would make it, not the parser, the slow part.
  if (text.size() > 2048) return 0;
  std::vector<bool> chosen;
  const bool accepted = domain != 0 && naive_selection(text, domain, &chosen);
  if (static_cast<bool>(parsed) != accepted) __builtin_trap();
  if (!parsed) {
    if (parsed.error().message.find("parameter 'values'") == std::string::npos) __builtin_trap();
    return 0;
  }
  const std::vector<uint32_t>& values = parsed->values();
  size_t next = 0;
  for (uint32_t v = 0; v < domain; ++v) {
    if (parsed->contains(v) != chosen[v]) __builtin_trap();
    if (!chosen[v]) continue;
    if (next >= values.size() || values[next] != v) __builtin_trap();
    ++next;
  }
  if (next != values.size() || parsed->contains(domain)) __builtin_trap();
  return 0;
}
