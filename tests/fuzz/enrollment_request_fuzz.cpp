// POST /v1/enroll's body, untrusted: parse_enrollment_request never throws
// or crashes, and whatever it accepts is exactly the documented shape (the
// nonce written back in that shape parses to the same nonce).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "auth/enrollment_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto nonce = blur::collector::auth::parse_enrollment_request(body);
  if (!nonce) {
    if (nonce.error().message.find("device_nonce") == std::string::npos) std::abort();
    return 0;
  }
  char again[64];
  std::snprintf(again, sizeof again, "{\"device_nonce\":\"%016llx\"}",
                static_cast<unsigned long long>(nonce.value()));
  auto reparsed = blur::collector::auth::parse_enrollment_request(again);
  if (!reparsed || reparsed.value() != nonce.value()) std::abort();
  return 0;
}
