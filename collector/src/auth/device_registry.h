// What enrollment reads and records about devices, in the store that every
// collector of the database shares (api/store_device_registry.h adapts the
// Store): a nonce's binding to the SHA-256 of its device key, and whether it
// has reports. Errors are the store's (kUnavailable).
#ifndef BLUR_COLLECTOR_AUTH_DEVICE_REGISTRY_H
#define BLUR_COLLECTOR_AUTH_DEVICE_REGISTRY_H

#include <cstdint>
#include <optional>

#include "auth/secret.h"
#include "util/outcome.h"

namespace blur::collector::auth {

struct DeviceBinding {
  int64_t enrolled_at = 0;  // Unix s of the first enrollment
  Digest key_sha256{};
  int64_t last_renewed_at = 0;
};

class DeviceRegistry {
 public:
  virtual ~DeviceRegistry() = default;
  virtual Outcome<std::optional<DeviceBinding>> binding(uint64_t device_nonce) = 0;
  virtual Outcome<bool> has_reports(uint64_t device_nonce) = 0;
  // Binds the nonce unless it is bound: the binding stored afterwards (this
  // one, or one made before, by any collector).
  virtual Outcome<DeviceBinding> bind(uint64_t device_nonce, const Digest& key_sha256,
                                      int64_t now) = 0;
  virtual Fallible renewed(uint64_t device_nonce, int64_t now) = 0;
};

}  // namespace blur::collector::auth

#endif  // BLUR_COLLECTOR_AUTH_DEVICE_REGISTRY_H
