#include "config/setting.h"

#include <type_traits>

namespace blur::collector {

std::optional<int64_t> parse_duration_seconds(const std::string& text) {
  static const std::pair<char, int64_t> kUnits[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}};
  if (text.empty() || text.size() > 12) return std::nullopt;
  int64_t unit = 1;
  std::string digits = text;
  for (const auto& [suffix, seconds] : kUnits) {
    if (text.back() == suffix) {
      unit = seconds;
      digits.pop_back();
    }
  }
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  const int64_t count = std::stoll(digits);  // at most 12 digits
  constexpr int64_t kCentury = int64_t{100} * 366 * 86400;
  if (count > kCentury / unit) return std::nullopt;
  return count * unit;
}

void copy_setting_value(const Setting& from, const Setting& to) {
  std::visit(
      [&](auto* source) {
        using T = std::remove_pointer_t<decltype(source)>;
        *std::get<T*>(to.field) = *source;
      },
      from.field);
}

}  // namespace blur::collector
