// POST /v1/enroll's body, untrusted: parse_enrollment_request never throws
// or crashes, refuses with a message naming the shape, and whatever it
// accepts is exactly the documented shape (the request written back in that
// shape parses to the same nonce, key and token).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "auth/enrollment_request.h"
#include "auth/secret.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace blur::collector::auth;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto request = parse_enrollment_request(body);
  if (!request) {
    if (request.error().message.find("device_key") == std::string::npos) std::abort();
    return 0;
  }
  if (request->device_token.size() > kMaxEnrollmentTokenLength) std::abort();
  char nonce[17];
  std::snprintf(nonce, sizeof nonce, "%016llx",
                static_cast<unsigned long long>(request->device_nonce));
  nlohmann::json again{{"device_nonce", nonce}, {"device_key", to_hex(request->device_key)}};
  if (!request->device_token.empty()) again["device_token"] = request->device_token;
  const std::string text = again.dump();
  if (text.size() > kMaxEnrollmentRequestBytes) return 0;  // a token of many escapes
  auto reparsed = parse_enrollment_request(text);
  if (!reparsed || reparsed->device_nonce != request->device_nonce ||
      reparsed->device_key != request->device_key ||
      reparsed->device_token != request->device_token) {
    std::abort();
  }
  return 0;
}
