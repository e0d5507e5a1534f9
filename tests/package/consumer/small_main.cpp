// The whole SDK compiled from the package's sources with this project's
// configuration header (blur_client_library(... CONFIG_FILE ...)): the
// configuration reached the SDK, and a Client without storage fails closed.
#include <stdio.h>

#include "blur/client.h"

static_assert(BLUR_MAX_CLIENT_METRICS == 2, "small_config.h reached the SDK");

int main() {
  static blur::Client client;
  const blur::Port no_storage{};
  const blur::Status status = client.open(no_storage);
  printf("consumer: small configuration, open without a port: %s\n", blur::status_name(status));
  return status == blur::Status::kOk ? 1 : 0;
}
