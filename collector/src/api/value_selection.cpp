#include "api/value_selection.h"

#include <charconv>
#include <optional>
#include <string>

namespace blur::collector {

namespace {

// A value of 0..domain_size-1 written in decimal, or nullopt.
std::optional<uint32_t> domain_value(std::string_view text, uint32_t domain_size) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value >= domain_size) {
    return std::nullopt;
  }
  return static_cast<uint32_t>(value);
}

}  // namespace

Outcome<ValueSelection> ValueSelection::parse(std::string_view text, uint32_t domain_size) {
  ValueSelection selection;
  selection.chosen_.assign(domain_size, false);
  const auto refuse = [&](std::string_view part) {
    std::string shown(part.substr(0, 40));
    return invalid("parameter 'values' lists values of 0.." + std::to_string(domain_size - 1) +
                   " and ranges like 0-15, separated by commas; not '" + shown + "'");
  };
  if (domain_size == 0) return refuse(text);
  std::vector<uint32_t> starts(domain_size, 0), ends(domain_size, 0);
  size_t at = 0;
  for (;;) {
    const size_t comma = text.find(',', at);
    const std::string_view part =
        text.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    const size_t dash = part.find('-');
    const auto low = domain_value(part.substr(0, dash), domain_size);
    const auto high = dash == std::string_view::npos ? low
                                                     : domain_value(part.substr(dash + 1), domain_size);
    if (!low || !high || *high < *low) return refuse(part);
    // Where ranges start and end, summed below: O(parts + d), however
    // many wide ranges the text repeats.
    ++starts[*low];
    ++ends[*high];
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  uint64_t open = 0;
  for (uint32_t v = 0; v < domain_size; ++v) {
    open += starts[v];
    if (open != 0) {
      selection.chosen_[v] = true;
      selection.values_.push_back(v);
    }
    open -= ends[v];
  }
  return selection;
}

}  // namespace blur::collector
