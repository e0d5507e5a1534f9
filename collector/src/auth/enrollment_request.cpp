#include "auth/enrollment_request.h"

#include <nlohmann/json.hpp>

#include "auth/secret.h"
#include "util/json_writer.h"
#include "util/time_text.h"

namespace blur::collector::auth {

Outcome<EnrollmentRequest> parse_enrollment_request(std::string_view body) {
  constexpr const char* kShape =
      "the body is {\"device_nonce\": \"<16 lower-case hex digits>\", \"device_key\": \"<64 "
      "lower-case hex digits>\"} (and \"device_token\" to bind a device that reported before "
      "device keys)";
  if (body.size() > kMaxEnrollmentRequestBytes) return invalid(kShape);
  const auto json = nlohmann::json::parse(body.begin(), body.end(), nullptr, false);
  if (json.is_discarded() || !json.is_object()) return invalid(kShape);
  for (const auto& [name, value] : json.items()) {
    if ((name != "device_nonce" && name != "device_key" && name != "device_token") ||
        !value.is_string()) {
      return invalid(kShape);
    }
  }
  if (!json.contains("device_nonce")) return invalid(kShape);
  if (!json.contains("device_key")) {
    return invalid(
        "the body has no device_key: it comes from an SDK before device keys (Blur 0.1); this "
        "collector binds each device nonce to a key only the device can compute, so update the "
        "app's Blur SDK (its enrollment body carries the key); " +
        std::string(kShape));
  }
  EnrollmentRequest request;
  const std::string& nonce = json["device_nonce"].get_ref<const std::string&>();
  if (nonce.size() != 16 || !read_hex(nonce, &request.device_nonce)) return invalid(kShape);
  const auto key = digest_from_hex(json["device_key"].get_ref<const std::string&>());
  if (!key) return invalid(kShape);
  request.device_key = *key;
  if (json.contains("device_token")) {
    request.device_token = json["device_token"].get<std::string>();
    if (request.device_token.empty() ||
        request.device_token.size() > kMaxEnrollmentTokenLength) {
      return invalid(kShape);
    }
  }
  return request;
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
