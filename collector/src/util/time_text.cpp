#include "util/time_text.h"

#include <chrono>
#include <cstdio>

namespace blur::collector {

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
// days_from_civil).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool digits(std::string_view text, size_t at, size_t count, unsigned* value) {
  if (at + count > text.size()) return false;
  unsigned v = 0;
  for (size_t i = at; i < at + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    v = v * 10 + static_cast<unsigned>(text[i] - '0');
  }
  *value = v;
  return true;
}

unsigned days_in_month(unsigned year, unsigned month) {
  static const unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

// A year 0000 date with a positive offset, or a 9999-12-31 one with a
// negative offset or a leap second, is outside the range.
std::optional<int64_t> in_range(int64_t t) {
  if (t < kEarliestTime || t > kLatestTime) return std::nullopt;
  return t;
}

}  // namespace

std::optional<int64_t> parse_time(std::string_view text) {
  if (text.empty() || text.size() > 40) return std::nullopt;
  // Unix seconds: digits only (an optional minus sign).
  size_t start = text[0] == '-' ? 1 : 0;
  if (start < text.size() && text.find_first_not_of("0123456789", start) == std::string_view::npos) {
    if (text.size() - start > 12) return std::nullopt;
    int64_t v = 0;
    for (size_t i = start; i < text.size(); ++i) v = v * 10 + (text[i] - '0');
    return in_range(start ? -v : v);
  }
  unsigned year, month, day;
  if (!digits(text, 0, 4, &year) || text.size() < 10 || text[4] != '-' ||
      !digits(text, 5, 2, &month) || text[7] != '-' || !digits(text, 8, 2, &day) || month < 1 ||
      month > 12 || day < 1 || day > days_in_month(year, month)) {
    return std::nullopt;
  }
  const int64_t midnight = days_from_civil(year, month, day) * 86400;
  if (text.size() == 10) return in_range(midnight);
  unsigned hour, minute, second;
  if ((text[10] != 'T' && text[10] != 't' && text[10] != ' ') || !digits(text, 11, 2, &hour) ||
      text.size() < 19 || text[13] != ':' || !digits(text, 14, 2, &minute) || text[16] != ':' ||
      !digits(text, 17, 2, &second) || hour > 23 || minute > 59 || second > 60) {
    return std::nullopt;
  }
  size_t at = 19;
  if (at < text.size() && text[at] == '.') {
    ++at;
    const size_t fraction = at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') ++at;
    if (at == fraction) return std::nullopt;
  }
  int64_t offset = 0;
  if (at < text.size() && (text[at] == 'Z' || text[at] == 'z')) {
    ++at;
  } else if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
    unsigned oh, om;
    if (!digits(text, at + 1, 2, &oh) || at + 3 >= text.size() || text[at + 3] != ':' ||
        !digits(text, at + 4, 2, &om) || oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset = (text[at] == '+' ? 1 : -1) * static_cast<int64_t>(oh * 3600 + om * 60);
    at += 6;
  } else {
    return std::nullopt;  // RFC 3339 requires an offset
  }
  if (at != text.size()) return std::nullopt;
  return in_range(midnight + hour * 3600 + minute * 60 + second - offset);
}

std::string format_time(int64_t t) {
  // Floor division and its remainder, without an intermediate beyond
  // int64 (t - 86399 or days * 86400 overflow near INT64_MIN).
  int64_t days = t / 86400;
  int64_t seconds = t % 86400;
  if (seconds < 0) {
    seconds += 86400;
    --days;
  }
  // civil_from_days (Hinnant)
  const int64_t z = days + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400 + (m <= 2);
  char text[96];
  std::snprintf(text, sizeof text, "%04lld-%02u-%02uT%02lld:%02lld:%02lldZ",
                static_cast<long long>(y), m, d, static_cast<long long>(seconds / 3600),
                static_cast<long long>(seconds / 60 % 60), static_cast<long long>(seconds % 60));
  return text;
}

std::string format_time_millis(int64_t unix_millis) {
  const int64_t millis = ((unix_millis % 1000) + 1000) % 1000;
  // Floor division, without unix_millis - millis (overflows near INT64_MIN).
  std::string text = format_time(unix_millis / 1000 - (unix_millis % 1000 < 0 ? 1 : 0));
  char fraction[8];
  std::snprintf(fraction, sizeof fraction, ".%03lld", static_cast<long long>(millis));
  text.insert(text.size() - 1, fraction);  // before the 'Z'
  return text;
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace blur::collector
