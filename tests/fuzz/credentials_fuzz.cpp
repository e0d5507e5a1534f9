// The credentials file, untrusted (collectors sharing a directory read it
// again whenever it changes): parse_credentials never throws or crashes,
// and what it accepts it writes back in a form that parses to the same
// credentials (credentials_text is a fixed point), revocations included.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "auth/credentials.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace blur::collector::auth;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = parse_credentials(text, "fuzz");
  if (!parsed) {
    if (parsed.error().message.rfind("fuzz", 0) != 0) std::abort();  // names its source
    return 0;
  }
  const std::string written = credentials_text(parsed.value());
  auto again = parse_credentials(written, "written");
  if (!again || credentials_text(again.value()) != written) std::abort();
  if (again->revoked_devices.size() != parsed->revoked_devices.size()) std::abort();
  return 0;
}
