// Times in query parameters and output: RFC 3339 ("2026-11-23T10:00:00Z",
// "2026-11-23T11:00:00+01:00", fractions of a second dropped), a date
// ("2026-11-23", midnight UTC) or Unix seconds ("1795000000").
#ifndef BLUR_COLLECTOR_UTIL_TIME_TEXT_H
#define BLUR_COLLECTOR_UTIL_TIME_TEXT_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace blur::collector {

// Unix seconds, or nothing if the text is none of the accepted forms.
std::optional<int64_t> parse_time(std::string_view text);

// "2026-11-23T10:00:00Z"
std::string format_time(int64_t unix_seconds);

// "2026-11-23T10:00:00.123Z": milliseconds since the epoch, for logs.
std::string format_time_millis(int64_t unix_millis);

// Seconds since the epoch now (system clock).
int64_t unix_now();

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_UTIL_TIME_TEXT_H
