#include "auth/enrollment_request.h"

#include <nlohmann/json.hpp>

#include "auth/secret.h"
#include "util/json_writer.h"
#include "util/time_text.h"

namespace blur::collector::auth {

Outcome<uint64_t> parse_enrollment_request(std::string_view body) {
  constexpr const char* kShape = "the body is {\"device_nonce\": \"<16 lower-case hex digits>\"}";
  if (body.size() > kMaxEnrollmentRequestBytes) return invalid(kShape);
  const auto json = nlohmann::json::parse(body.begin(), body.end(), nullptr, false);
  if (json.is_discarded() || !json.is_object() || json.size() != 1 ||
      !json.contains("device_nonce") || !json["device_nonce"].is_string()) {
    return invalid(kShape);
  }
  const std::string& hex = json["device_nonce"].get_ref<const std::string&>();
  uint64_t nonce = 0;
  if (hex.size() != 16 || !read_hex(hex, &nonce)) return invalid(kShape);
  return nonce;
}

std::string enrollment_answer(const Enrollment& enrollment) {
  char nonce[17];
  std::snprintf(nonce, sizeof nonce, "%016llx",
                static_cast<unsigned long long>(enrollment.device_nonce));
  JsonWriter out;
  out.begin_object()
      .member("token", enrollment.token)
      .member("device_nonce", std::string(nonce))
      .member("expires_at", enrollment.expires_at)
      .member("expires", format_time(enrollment.expires_at))
      .end_object();
  return out.take();
}

}  // namespace blur::collector::auth
