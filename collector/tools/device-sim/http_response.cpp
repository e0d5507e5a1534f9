#include "http_response.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace blur::sim {

namespace {

bool equals_ignoring_case(const char* a, size_t a_length, const char* b) {
  const size_t b_length = std::strlen(b);
  if (a_length != b_length) return false;
  for (size_t i = 0; i < a_length; ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  }
  return true;
}

}  // namespace

Response parse_response(const std::string& in) {
  Response r;
  const size_t end = in.find("\r\n\r\n");
  if (end == std::string::npos) {
    if (in.size() > 65536) {
      r.state = Response::State::kMalformed;
      r.problem = "response headers longer than 64 KiB";
    }
    return r;
  }
  r.state = Response::State::kMalformed;
  if (in.compare(0, 5, "HTTP/") != 0 || in.size() < 12 || in[8] != ' ') {
    r.problem = "not an HTTP/1.x status line";
    return r;
  }
  for (size_t i = 9; i < 12; ++i) {
    if (in[i] < '0' || in[i] > '9') {
      r.problem = "bad status code";
      return r;
    }
    r.status = r.status * 10 + (in[i] - '0');
  }
  bool has_length = false;
  size_t length = 0;
  for (size_t line = in.find("\r\n") + 2; line < end;) {
    const size_t line_end = in.find("\r\n", line);
    const size_t colon = in.find(':', line);
    if (colon != std::string::npos && colon < line_end) {
      size_t value = colon + 1;
      while (value < line_end && (in[value] == ' ' || in[value] == '\t')) ++value;
      const char* name = in.data() + line;
      const size_t name_length = colon - line;
      if (equals_ignoring_case(name, name_length, "content-length")) {
        has_length = true;
        length = 0;
        for (size_t i = value; i < line_end && in[i] >= '0' && in[i] <= '9'; ++i) {
          length = length * 10 + static_cast<size_t>(in[i] - '0');
        }
      } else if (equals_ignoring_case(name, name_length, "connection")) {
        r.close = in.compare(value, 5, "close") == 0 || in.compare(value, 5, "Close") == 0;
      } else if (equals_ignoring_case(name, name_length, "transfer-encoding")) {
        r.problem = "chunked responses are not supported";
        return r;
      }
    }
    line = line_end + 2;
  }
  if (!has_length && r.status != 204 && r.status != 304) {
    r.problem = "response without Content-Length";
    return r;
  }
  r.body_offset = end + 4;
  r.length = r.body_offset + length;
  r.state = in.size() >= r.length ? Response::State::kComplete : Response::State::kIncomplete;
  return r;
}

uint64_t count_of(const char* body, size_t length, std::string_view key) {
  const char* end = body + length;
  const char* found = body;
  for (;;) {  // "key" in quotes, so "accepted" does not match inside "not_accepted"
    found = std::search(found, end, key.begin(), key.end());
    if (found == end) return 0;
    if (found > body && found[-1] == '"' && found + key.size() < end && found[key.size()] == '"') {
      break;
    }
    ++found;
  }
  const char* p = found + key.size() + 1;
  while (p < end && (*p == ' ' || *p == ':')) ++p;
  uint64_t value = 0;
  for (; p < end && *p >= '0' && *p <= '9'; ++p)
    value = value * 10 + static_cast<uint64_t>(*p - '0');
  return value;
}

}  // namespace blur::sim
