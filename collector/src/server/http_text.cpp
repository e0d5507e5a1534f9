#include "server/http_text.h"

namespace blur::collector::http {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

}  // namespace

bool is_blank(char c) { return c == ' ' || c == '\t'; }

bool percent_decode(std::string_view text, bool plus_is_space, std::string* out) {
  out->clear();
  out->reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return false;  // needs two more characters
      const int high = hex_value(text[i + 1]);
      const int low = hex_value(text[i + 2]);
      if (high < 0 || low < 0) return false;
      out->push_back(static_cast<char>(high * 16 + low));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out->push_back(' ');
    } else {
      out->push_back(c);
    }
  }
  return true;
}

bool parse_target(std::string_view target, Target* out, std::string* error) {
  out->path.clear();
  out->query.clear();
  if (target.empty() || target[0] != '/') {
    *error = "the request target must be a path starting with '/'";
    return false;
  }
  const std::size_t question = target.find('?');
  out->path = std::string(target.substr(0, question));
  if (question == std::string_view::npos) return true;
  std::string_view rest = target.substr(question + 1);
  // A fragment is never sent by a conforming client; ignore one if present.
  rest = rest.substr(0, rest.find('#'));
  while (!rest.empty()) {
    const std::size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    const std::size_t equals = pair.find('=');
    std::string name, value;
    if (!percent_decode(pair.substr(0, equals), true, &name) ||
        (equals != std::string_view::npos &&
         !percent_decode(pair.substr(equals + 1), true, &value))) {
      *error = "malformed percent-escape in the query string";
      out->query.clear();
      return false;
    }
    out->query.emplace_back(std::move(name), std::move(value));
  }
  return true;
}

std::string media_type(std::string_view content_type) {
  const std::string_view type = content_type.substr(0, content_type.find(';'));
  std::size_t begin = 0, end = type.size();
  while (begin < end && is_blank(type[begin])) ++begin;
  while (end > begin && is_blank(type[end - 1])) --end;
  std::string result;
  result.reserve(end - begin);
  for (std::size_t i = begin; i < end; ++i) result.push_back(lower(type[i]));
  return result;
}

std::string printable(std::string_view text, std::size_t max_length) {
  static const char kHex[] = "0123456789abcdef";
  std::string result;
  const std::size_t n = text.size() < max_length ? text.size() : max_length;
  result.reserve(n + 8);
  for (std::size_t i = 0; i < n; ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x20 && byte < 0x7f && byte != '\\') {
      result.push_back(static_cast<char>(byte));
    } else {
      result += "\\x";
      result.push_back(kHex[byte >> 4]);
      result.push_back(kHex[byte & 15]);
    }
  }
  if (n < text.size()) result += "...";
  return result;
}

}  // namespace blur::collector::http
