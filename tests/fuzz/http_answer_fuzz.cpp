// libFuzzer: the collector's answer as the device's HTTPS transport reads it
// (ports/posix/http_answer.h), whoever sits at the other end of the TLS
// connection. Any bytes: no crash and no undefined behaviour; the parse
// agrees with a plain reference written from RFC 9112's grammar (status
// line, header lines, blank line); an accepted answer's status is what the
// old sscanf("HTTP/1.%*d %d") read, its parts are where the reference finds
// them, and written back they parse to the same; the status line for
// messages is printable. The enrollment token: an accepted one is [0-9a-z-],
// fits, is what the old strstr() extraction found, and reads back from
// {"token":"..."}; a refused one leaves the caller's buffer untouched.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "http_answer.h"

namespace {

using blur::Status;
using namespace blur::posix;  // HttpAnswer, TextSpan and the three functions

bool text_byte(unsigned char c) { return c == '\t' || (c >= 0x20 && c != 0x7f); }

bool tchar(unsigned char c) {
  return (c < 0x80 && std::isalnum(c) != 0) || (c != 0 && std::strchr("!#$%&'*+-.^_`|~", c));
}

// The reference: split into CRLF-terminated lines, check each against the
// grammar. Returns whether the answer is acceptable.
bool reference_accepts(const std::string& bytes) {
  std::vector<std::string> lines;  // whole lines (with a CRLF) before the blank one
  for (size_t at = 0;;) {
    const size_t end = bytes.find("\r\n", at);
    if (end == std::string::npos || (end == at && !lines.empty())) break;
    lines.push_back(bytes.substr(at, end - at));
    at = end + 2;
  }
  if (lines.empty()) return false;
  const std::string& status = lines[0];
  if (status.size() < 12 || status.compare(0, 7, "HTTP/1.") != 0) return false;
  if (!std::isdigit(static_cast<unsigned char>(status[7])) || status[8] != ' ') return false;
  for (int i = 9; i < 12; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(status[i]))) return false;
  }
  if (status[9] < '1' || status[9] > '5') return false;
  if (status.size() > 12 && status[12] != ' ') return false;
  for (size_t i = 13; i < status.size(); ++i) {
    if (!text_byte(static_cast<unsigned char>(status[i]))) return false;
  }
  for (size_t l = 1; l < lines.size(); ++l) {
    const std::string& line = lines[l];
    const size_t colon = line.find(':');
    if (colon == std::string::npos || colon == 0) return false;
    for (size_t i = 0; i < colon; ++i) {
      if (!tchar(static_cast<unsigned char>(line[i]))) return false;
    }
    for (size_t i = colon + 1; i < line.size(); ++i) {
      if (!text_byte(static_cast<unsigned char>(line[i]))) return false;
    }
  }
  return true;
}

// What the transport did before http_answer.h, on the text up to its NUL.
std::string old_token(const std::string& answer_text) {
  const char* answer = answer_text.c_str();
  const char* body_start = std::strstr(answer, "\r\n\r\n");
  const char* field = body_start != nullptr ? std::strstr(body_start, "\"token\"") : nullptr;
  const char* value = field != nullptr ? std::strchr(field + 7, '"') : nullptr;
  const char* end = value != nullptr ? std::strchr(value + 1, '"') : nullptr;
  return end != nullptr ? std::string(value + 1, end) : std::string();
}

void check_token(const std::string& bytes, const HttpAnswer* answer, size_t capacity) {
  const TextSpan body = answer != nullptr && answer->head_complete ? answer->body
                                                                    : TextSpan{bytes.data(), bytes.size()};
  char token[128];
  std::memset(token, '*', sizeof token);
  const Status status = parse_enrollment_token(body, token, capacity);
  if (status != Status::kOk) {
    for (char c : token) {
      if (c != '*') __builtin_trap();  // a refusal writes nothing
    }
  } else {
    const size_t length = std::strlen(token);
    if (length == 0 || length >= capacity) __builtin_trap();
    for (size_t i = 0; i < length; ++i) {
      const char c = token[i];
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) __builtin_trap();
    }
    // Written back in the collector's shape, it reads the same.
    const std::string again = "{\"token\":\"" + std::string(token) + "\",\"x\":1}";
    char back[128];
    if (parse_enrollment_token(TextSpan{again.data(), again.size()}, back, capacity) !=
            Status::kOk ||
        std::strcmp(back, token) != 0) {
      __builtin_trap();
    }
  }
  // The old extraction, on the whole answer without NULs, agrees: the same
  // token, or one the new rules refuse (a byte outside [0-9a-z-], too long).
  if (answer == nullptr || !answer->head_complete ||
      std::memchr(bytes.data(), '\0', bytes.size()) != nullptr) {
    return;
  }
  const std::string old = old_token(bytes);
  const bool old_acceptable = !old.empty() && old.size() < capacity &&
                              old.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") ==
                                  std::string::npos;
  if (old_acceptable != (status == Status::kOk)) __builtin_trap();
  if (old_acceptable && old != token) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  const blur::Result<HttpAnswer> parsed = parse_http_answer(bytes.data(), bytes.size());
  if (parsed.ok() != reference_accepts(bytes)) __builtin_trap();
  if (!parsed.ok()) {
    if (parsed.status() != Status::kInvalidArgument) __builtin_trap();
    check_token(bytes, nullptr, 96);
    return 0;
  }
  const HttpAnswer& answer = parsed.value();
  const size_t line_end = bytes.find("\r\n");
  if (answer.status < 100 || answer.status > 599) __builtin_trap();
  if (answer.status_line.data != bytes.data() || answer.status_line.length != line_end) {
    __builtin_trap();
  }
  int old = 0;
  if (std::sscanf(bytes.c_str(), "HTTP/1.%*d %d", &old) != 1 || old != answer.status) {
    __builtin_trap();
  }
  const size_t head_end = bytes.find("\r\n\r\n");
  if (answer.head_complete != (head_end != std::string::npos)) __builtin_trap();
  const std::string body = answer.head_complete ? bytes.substr(head_end + 4) : std::string();
  if (answer.body.length != body.size() ||
      (answer.head_complete && answer.body.data != bytes.data() + head_end + 4)) {
    __builtin_trap();
  }
  // Written back as HTTP/1.1 with its status and reason, the same header
  // lines and body: the same parts.
  const std::string again =
      "HTTP/1.1 " + std::to_string(answer.status) + bytes.substr(12, line_end - 12) +
      bytes.substr(line_end);
  const auto back = parse_http_answer(again.data(), again.size());
  if (!back.ok() || back.value().status != answer.status ||
      back.value().status_line.length != line_end ||
      back.value().head_complete != answer.head_complete ||
      std::string(back.value().body.data, back.value().body.length) != body) {
    __builtin_trap();
  }
  // The status line for a message: printable, cut to the buffer.
  for (size_t capacity : {size_t{1}, size_t{13}, size_t{160}}) {
    char message[160];
    printable_status_line(answer, message, capacity);
    const size_t length = std::strlen(message);
    if (length != std::min(line_end, capacity - 1)) __builtin_trap();
    for (size_t i = 0; i < length; ++i) {
      const unsigned char c = static_cast<unsigned char>(message[i]);
      if (c < 0x20 || c >= 0x7f) __builtin_trap();
      if (c != '?' && c != static_cast<unsigned char>(bytes[i])) __builtin_trap();
    }
  }
  check_token(bytes, &answer, 96);
  check_token(bytes, &answer, 8);
  return 0;
}
