// libFuzzer: the collector's time parameters (util/time_text.h), which come
// straight from a query string (?from=, ?to=). Any bytes: no crash and no
// undefined behaviour; an accepted time lies in the documented range and
// comes back unchanged from format_time; the accepted forms agree with one
// another (Unix seconds are their decimal value, a canonical RFC 3339 time
// is its own formatting, an offset shifts the instant by exactly itself, a
// fraction is dropped). format_time and format_time_millis are total over
// int64 (a stored bucket start may be anything).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "util/time_text.h"

namespace {

using namespace blur::collector;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// "YYYY-MM-DDTHH:MM:SSZ" (the year may be longer or signed for times
// outside the range): the fixed shape of the last 16 characters.
bool has_time_shape(const std::string& text) {
  if (text.size() < 20) return false;
  const std::string_view tail = std::string_view(text).substr(text.size() - 16);
  static const char kShape[] = "-dd-ddTdd:dd:ddZ";
  for (size_t i = 0; i < 16; ++i) {
    if (kShape[i] == 'd' ? !is_digit(tail[i]) : tail[i] != kShape[i]) return false;
  }
  return true;
}

void check_parsed(std::string_view text, int64_t t) {
  if (t < kEarliestTime || t > kLatestTime) __builtin_trap();
  const std::string formatted = format_time(t);
  if (formatted.size() != 20 || !has_time_shape(formatted)) __builtin_trap();
  const auto back = parse_time(formatted);
  if (!back || *back != t) __builtin_trap();

  // Unix seconds: the decimal value, whatever the parser's own arithmetic.
  const size_t sign = text[0] == '-' ? 1 : 0;
  if (text.size() > sign &&
      text.find_first_not_of("0123456789", sign) == std::string_view::npos) {
    if (std::strtoll(std::string(text).c_str(), nullptr, 10) != t) __builtin_trap();
    return;
  }
  // A date is midnight UTC of that date.
  if (text.size() == 10) {
    if (formatted.compare(0, 10, text) != 0 || formatted.compare(10, 10, "T00:00:00Z") != 0)
      __builtin_trap();
    return;
  }
  // The canonical form (no leap second) is its own formatting.
  if (text.size() == 20 && text[10] == 'T' && text[19] == 'Z' && text.substr(17, 2) < "60" &&
      formatted != text) {
    __builtin_trap();
  }
  // An offset moves the instant by exactly itself: the same wall time in UTC
  // is t + offset.
  const std::string_view wall = text.substr(0, 19);
  std::string_view zone = text.substr(19);
  if (!zone.empty() && zone[0] == '.') {
    const size_t end = zone.find_first_not_of("0123456789", 1);
    zone = end == std::string_view::npos ? std::string_view() : zone.substr(end);
    // The fraction is dropped: the same time without it.
    const auto whole = parse_time(std::string(wall) + std::string(zone));
    if (!whole || *whole != t) __builtin_trap();
  }
  if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-')) {
    const int64_t offset = ((zone[1] - '0') * 10 + (zone[2] - '0')) * 3600 +
                           ((zone[4] - '0') * 10 + (zone[5] - '0')) * 60;
    const auto utc = parse_time(std::string(wall) + "Z");
    if (utc && *utc != t + (zone[0] == '+' ? offset : -offset)) __builtin_trap();
  }
}

void check_format(int64_t t) {
  const std::string text = format_time(t);
  if (!has_time_shape(text)) __builtin_trap();
  if (t >= kEarliestTime && t <= kLatestTime) {
    const auto back = parse_time(text);
    if (!back || *back != t) __builtin_trap();
  }
  // Milliseconds: the formatted second of floor(t / 1000), then ".mmm".
  const int64_t remainder = t % 1000;
  const int64_t seconds = t / 1000 - (remainder < 0 ? 1 : 0);
  const int64_t millis = remainder < 0 ? remainder + 1000 : remainder;
  std::string expected = format_time(seconds);
  const char fraction[] = {'.', static_cast<char>('0' + millis / 100),
                           static_cast<char>('0' + millis / 10 % 10),
                           static_cast<char>('0' + millis % 10), '\0'};
  expected.insert(expected.size() - 1, fraction);
  if (format_time_millis(t) != expected) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (const auto t = parse_time(text)) check_parsed(text, *t);

  // The first eight bytes as any instant, near the limits of int64 too.
  int64_t t = 0;
  std::memcpy(&t, data, size < sizeof t ? size : sizeof t);
  check_format(t);
  return 0;
}
