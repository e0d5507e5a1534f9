// libFuzzer: the parts of an HTTP request the collector's server decodes
// itself (server/http_text.h): the request target (path + percent-decoded
// query), a Content-Type's media type, text for logs, an Accept header
// (server/accept_header.h). Any bytes: no crash,
// and the results keep their promises.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "server/accept_header.h"
#include "server/http_text.h"

namespace {

std::string percent_encode(std::string_view bytes) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    out += '%';
    out += kHex[byte >> 4];
    out += kHex[byte & 15];
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace blur::collector::http;
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  Target target;
  std::string error;
  if (parse_target(input, &target, &error)) {
    // The path is the target up to the first '?', raw.
    if (target.path.empty() || target.path[0] != '/') __builtin_trap();
    if (input.compare(0, target.path.size(), target.path) != 0) __builtin_trap();
    if (target.path.find('?') != std::string::npos) __builtin_trap();
    // Each name and value survives encoding and decoding unchanged.
    for (const auto& [name, value] : target.query) {
      std::string decoded;
      if (!percent_decode(percent_encode(name), true, &decoded) || decoded != name)
        __builtin_trap();
      if (!percent_decode(percent_encode(value), false, &decoded) || decoded != value)
        __builtin_trap();
    }
  } else if (error.empty()) {
    __builtin_trap();  // every refusal says why
  } else {
    for (const char c : error) {  // and says it in plain ASCII, none of the input
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e)
        __builtin_trap();
    }
  }

  std::string decoded;
  if (percent_decode(input, true, &decoded) && decoded.size() > input.size()) __builtin_trap();

  const std::string type = media_type(input);
  for (const char c : type) {
    if (c == ';' || (c >= 'A' && c <= 'Z')) __builtin_trap();
  }
  if (!type.empty() && (type.front() == ' ' || type.back() == ' ')) __builtin_trap();

  // Accept: an index of an offered type or none; an entry naming an
  // offered type exactly, alone, chooses it.
  static const std::vector<std::string> kOffered = {"application/json", "text/csv",
                                                    "application/x-ndjson"};
  if (const auto chosen = choose_media_type(input, kOffered); chosen && *chosen >= kOffered.size())
    __builtin_trap();
  if (choose_media_type(input, {}).has_value()) __builtin_trap();
  if (type == "text/csv" && input.find(',') == std::string_view::npos &&
      input.find(';') == std::string_view::npos && choose_media_type(input, kOffered) != 1u)
    __builtin_trap();

  const std::string log = printable(input, 64);
  for (const char c : log) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e)
      __builtin_trap();
  }
  return 0;
}
