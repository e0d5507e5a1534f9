// Enrollment as a fake device holding the app's secret can do it, for the
// attack posters (crafted_reports_poster, pem_reports_poster): the device's
// secret is HMAC-SHA256(label, nonce), its key derived as the SDK does.
#ifndef BLUR_TESTS_COLLECTOR_FAKE_ENROLLMENT_H
#define BLUR_TESTS_COLLECTOR_FAKE_ENROLLMENT_H

#include <httplib.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "blur/enrollment.h"

namespace blur_test {

// A device token for `nonce` (POST /v1/enroll with $BLUR_ENROLLMENT_SECRET),
// or "" with the reason on stderr.
inline std::string enroll_fake_device(httplib::Client& client, uint64_t nonce,
                                      const std::string& label) {
  const char* secret = std::getenv("BLUR_ENROLLMENT_SECRET");
  uint8_t device_secret[blur::kEnrollmentSecretSize];
  char body[blur::kEnrollmentBodySize] = "";
  if (blur::hmac_sha256(reinterpret_cast<const uint8_t*>(label.data()), label.size(),
                        reinterpret_cast<const uint8_t*>(&nonce), sizeof nonce, nullptr, 0,
                        device_secret) != blur::Status::kOk ||
      blur::write_enrollment_body(nonce, device_secret, nullptr, body, sizeof body) !=
          blur::Status::kOk) {
    std::fprintf(stderr, "cannot write the enrollment body\n");
    return "";
  }
  auto answer = client.Post("/v1/enroll",
                            {{"Authorization", std::string("Bearer ") + (secret ? secret : "")}},
                            body, "application/json");
  const auto json = answer && answer->status == 200
                        ? nlohmann::json::parse(answer->body, nullptr, false)
                        : nlohmann::json();
  if (!json.is_object() || !json.contains("token")) {
    std::fprintf(stderr, "enrollment failed: %s\n",
                 answer ? (std::to_string(answer->status) + " " + answer->body).c_str()
                        : httplib::to_string(answer.error()).c_str());
    return "";
  }
  return json["token"].get<std::string>();
}

}  // namespace blur_test

#endif  // BLUR_TESTS_COLLECTOR_FAKE_ENROLLMENT_H
