#include "http_answer.h"

#include <string.h>

namespace blur {
namespace posix {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// RFC 9110 tchar: the characters of a header name.
bool is_token_char(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c)) return true;
  return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != nullptr;
}

// HTAB, SP, VCHAR, obs-text: what a reason phrase or a header value holds.
bool is_text_char(char c) {
  const unsigned char u = static_cast<unsigned char>(c);
  return u == '\t' || (u >= 0x20 && u != 0x7f);
}

// The index of the first CRLF at or after `from`, or `length` if none.
size_t find_crlf(const char* bytes, size_t length, size_t from) {
  for (size_t i = from; i + 1 < length; ++i) {
    if (bytes[i] == '\r' && bytes[i + 1] == '\n') return i;
  }
  return length;
}

bool valid_status_line(const char* line, size_t length, int* status) {
  // "HTTP/1.x 200" is 12 bytes; then nothing, or SP and the reason.
  if (length < 12 || memcmp(line, "HTTP/1.", 7) != 0 || !is_digit(line[7]) || line[8] != ' ' ||
      !is_digit(line[9]) || !is_digit(line[10]) || !is_digit(line[11])) {
    return false;
  }
  if (length > 12 && line[12] != ' ') return false;
  for (size_t i = 13; i < length; ++i) {
    if (!is_text_char(line[i])) return false;
  }
  const int code = (line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0');
  if (code < 100 || code > 599) return false;
  *status = code;
  return true;
}

bool valid_field_line(const char* line, size_t length) {
  size_t name = 0;
  while (name < length && is_token_char(line[name])) ++name;
  if (name == 0 || name == length || line[name] != ':') return false;
  for (size_t i = name + 1; i < length; ++i) {
    if (!is_text_char(line[i])) return false;
  }
  return true;
}

bool is_lower_token_char(char c) { return (c >= 'a' && c <= 'z') || is_digit(c) || c == '-'; }

}  // namespace

Result<HttpAnswer> parse_http_answer(const char* bytes, size_t length) {
  if (bytes == nullptr) return Status::kInvalidArgument;
  const size_t line_end = find_crlf(bytes, length, 0);
  HttpAnswer answer{0, {bytes, line_end}, false, {bytes + length, 0}};
  if (line_end == length || !valid_status_line(bytes, line_end, &answer.status)) {
    return Status::kInvalidArgument;
  }
  for (size_t at = line_end + 2;;) {
    const size_t end = find_crlf(bytes, length, at);
    if (end == length) return answer;  // cut off: the head did not all arrive
    if (end == at) {
      answer.head_complete = true;
      answer.body = TextSpan{bytes + end + 2, length - end - 2};
      return answer;
    }
    if (!valid_field_line(bytes + at, end - at)) return Status::kInvalidArgument;
    at = end + 2;
  }
}

Status parse_enrollment_token(TextSpan body, char* token, size_t capacity) {
  if (body.data == nullptr || token == nullptr) return Status::kInvalidArgument;
  static constexpr char kKey[] = "\"token\"";
  constexpr size_t kKeyLength = sizeof kKey - 1;
  size_t key = 0;
  while (key + kKeyLength <= body.length && memcmp(body.data + key, kKey, kKeyLength) != 0) ++key;
  if (key + kKeyLength > body.length) return Status::kInvalidArgument;
  const char* end_of_body = body.data + body.length;
  const char* value = body.data + key + kKeyLength;
  while (value < end_of_body && *value != '"') ++value;
  if (value == end_of_body) return Status::kInvalidArgument;
  const char* end = ++value;
  while (end < end_of_body && *end != '"') ++end;
  const size_t token_length = static_cast<size_t>(end - value);
  if (end == end_of_body || token_length == 0 || token_length >= capacity) {
    return Status::kInvalidArgument;
  }
  for (size_t i = 0; i < token_length; ++i) {
    if (!is_lower_token_char(value[i])) return Status::kInvalidArgument;
  }
  memcpy(token, value, token_length);
  token[token_length] = '\0';
  return Status::kOk;
}

void printable_status_line(const HttpAnswer& answer, char* out, size_t capacity) {
  if (out == nullptr || capacity == 0) return;
  size_t n = 0;
  for (; n < answer.status_line.length && n + 1 < capacity; ++n) {
    const unsigned char c = static_cast<unsigned char>(answer.status_line.data[n]);
    out[n] = c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
  }
  out[n] = '\0';
}

}  // namespace posix
}  // namespace blur
