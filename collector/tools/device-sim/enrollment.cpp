#include "enrollment.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "blur/enrollment.h"

namespace blur::sim {

namespace {

bool read_secret(const std::string& file, const char* variable, std::string* out,
                 std::string* error) {
  if (!file.empty()) {
    std::ifstream in(file);
    std::stringstream text;
    if (!in || !(text << in.rdbuf())) {
      *error = "cannot read " + file;
      return false;
    }
    *out = text.str();
  } else if (const char* value = std::getenv(variable)) {
    *out = value;
  }
  while (!out->empty() && (out->back() == '\n' || out->back() == '\r' || out->back() == ' '))
    out->pop_back();
  if (!file.empty() && out->empty()) {
    *error = file + " is empty";
    return false;
  }
  return true;
}

}  // namespace

bool load_secrets(Options* o, std::string* error) {
  return read_secret(o->enrollment_secret_file, "BLUR_ENROLLMENT_SECRET", &o->enrollment_secret,
                     error) &&
         read_secret(o->reader_token_file, "BLUR_READER_TOKEN", &o->reader_token, error);
}

httplib::Headers bearer(const std::string& token) {
  if (token.empty()) return {};
  return {{"Authorization", "Bearer " + token}};
}

std::string simulated_enrollment_body(uint64_t device_nonce) {
  static constexpr char kLabel[] = "blur-device-sim";
  uint8_t nonce[8];
  for (int i = 0; i < 8; ++i) nonce[i] = static_cast<uint8_t>(device_nonce >> (8 * i));
  uint8_t secret[blur::kEnrollmentSecretSize];
  char body[blur::kEnrollmentBodySize];
  if (blur::hmac_sha256(reinterpret_cast<const uint8_t*>(kLabel), sizeof kLabel - 1, nonce,
                        sizeof nonce, nullptr, 0, secret) != blur::Status::kOk ||
      blur::write_enrollment_body(device_nonce, secret, nullptr, body, sizeof body) !=
          blur::Status::kOk) {
    return "";  // SHA-256 failed: the collector answers 400
  }
  return body;
}

EnrollResult enroll(httplib::Client& client, const std::string& enrollment_secret,
                    uint64_t device_nonce, int retries,
                    const std::function<void(const std::string&)>& waiting) {
  const std::string body = simulated_enrollment_body(device_nonce);
  EnrollResult result;
  std::string last;
  for (int attempt = 0; attempt <= retries; ++attempt) {
    auto response = client.Post("/v1/enroll", bearer(enrollment_secret), body, "application/json");
    const bool final_attempt = attempt == retries;
    if (!response) {
      last = httplib::to_string(response.error());
      if (final_attempt) break;
      if (waiting) waiting("no answer: " + last);
      std::this_thread::sleep_for(std::chrono::milliseconds(std::min(50 << attempt, 2000)));
      continue;
    }
    const std::string answer = std::to_string(response->status) + " " + response->body;
    if (response->status >= 500 || response->status == 429) {
      const std::string asked = response->get_header_value("Retry-After");
      last = std::to_string(response->status) +
             (asked.empty() ? "" : " (Retry-After " + asked + " s)") + " " + response->body;
      if (final_attempt) break;
      const int retry_after =
          response->status == 429 ? std::clamp(std::atoi(asked.c_str()), 1, 5) : 0;
      if (waiting) {
        waiting(last.substr(0, 400) + "; retrying in " + std::to_string(retry_after) + " s");
      }
      std::this_thread::sleep_for(std::chrono::seconds(retry_after) +
                                  std::chrono::milliseconds(std::min(50 << attempt, 2000)));
      continue;
    }
    result.kind = EnrollResult::Kind::kRefused;
    const auto json = nlohmann::json::parse(response->body, nullptr, false);
    if (response->status != 200 || !json.is_object() || !json.contains("token") ||
        !json["token"].is_string()) {
      result.error = "enrollment refused: " + answer;
      return result;
    }
    result.kind = EnrollResult::Kind::kEnrolled;
    result.token = json["token"].get<std::string>();
    return result;
  }
  result.error = "enrollment failed after " + std::to_string(retries + 1) + " attempts: " + last;
  return result;
}

EnrollResult DeviceCredentials::token_for(uint64_t device_nonce) {
  EnrollResult result;
  result.kind = EnrollResult::Kind::kEnrolled;
  if (o_.enrollment_secret.empty()) return result;
  if (token_.empty() || nonce_ != device_nonce) {
    result = enroll(client_, o_.enrollment_secret, device_nonce, o_.retries);
    if (result.kind != EnrollResult::Kind::kEnrolled) return result;
    nonce_ = device_nonce;
    token_ = result.token;
  }
  result.token = token_;
  return result;
}

}  // namespace blur::sim
