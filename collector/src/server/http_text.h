// The parts of an HTTP request the server decodes itself (Beast parses the
// message framing): the request target, the media type of a Content-Type,
// and untrusted text made safe for a log line. No Boost, no allocation
// beyond the results, no exceptions: the libFuzzer target
// tests/fuzz/http_text_fuzz.cpp feeds them arbitrary bytes.
#ifndef BLUR_COLLECTOR_SERVER_HTTP_TEXT_H
#define BLUR_COLLECTOR_SERVER_HTTP_TEXT_H

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace blur::collector::http {

// HTTP's optional white space (RFC 9110, 5.6.3): a space or a tab.
bool is_blank(char c);

// Decodes %XX escapes (and '+' as a space when `plus_is_space`, as in a
// query string) into `out`. The result may hold any bytes, NUL and invalid
// UTF-8 included. False on a '%' not followed by two hex digits.
bool percent_decode(std::string_view text, bool plus_is_space, std::string* out);

struct Target {
  std::string path;  // raw (not decoded), starts with '/'
  std::vector<std::pair<std::string, std::string>> query;  // decoded, in order
};

// Splits an origin-form request target ("/a/b?x=1&y") into its path and
// decoded query parameters ("y" has an empty value; empty pairs from "&&"
// are skipped). False, with `error` saying why (plain ASCII, nothing of the
// input), if the target is not a path or an escape is malformed.
bool parse_target(std::string_view target, Target* out, std::string* error);

// The media type of a Content-Type value, lower case, parameters and
// surrounding blanks removed: " Application/X-Protobuf ; q=1" gives
// "application/x-protobuf". Empty if there is none.
std::string media_type(std::string_view content_type);

// Untrusted bytes for a log line: printable ASCII kept, '\\' and every other
// byte written as \xNN, cut at `max_length` input bytes (then "...").
std::string printable(std::string_view text, std::size_t max_length = 200);

}  // namespace blur::collector::http

#endif  // BLUR_COLLECTOR_SERVER_HTTP_TEXT_H
