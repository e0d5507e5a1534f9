// Times in query parameters and output: RFC 3339 ("2026-11-23T10:00:00Z",
// "2026-11-23T11:00:00+01:00", fractions of a second dropped), a date
// ("2026-11-23", midnight UTC) or Unix seconds ("1795000000"), from
// 0000-01-01T00:00:00Z to 9999-12-31T23:59:59Z: the instants format_time
// writes with a four-digit year, so every parsed time formats and parses
// back to itself.
#ifndef BLUR_COLLECTOR_UTIL_TIME_TEXT_H
#define BLUR_COLLECTOR_UTIL_TIME_TEXT_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace blur::collector {

// A UTC day: buckets divide it; roll-ups fold a day's bucket rows into day rows.
inline constexpr int64_t kSecondsPerDay = 86400;

// The range parse_time accepts, Unix seconds.
inline constexpr int64_t kEarliestTime = -62167219200;  // 0000-01-01T00:00:00Z
inline constexpr int64_t kLatestTime = 253402300799;    // 9999-12-31T23:59:59Z

// Unix seconds, or nothing if the text is none of the accepted forms or
// the instant is outside [kEarliestTime, kLatestTime].
std::optional<int64_t> parse_time(std::string_view text);

// "2026-11-23T10:00:00Z" (any int64: outside the range above the year has
// more digits or a sign).
std::string format_time(int64_t unix_seconds);

// "2026-11-23T10:00:00.123Z": milliseconds since the epoch, for logs.
std::string format_time_millis(int64_t unix_millis);

// Seconds since the epoch now (system clock).
int64_t unix_now();

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_UTIL_TIME_TEXT_H
