// Enrollment's device registry (auth/device_registry.h) over the Store.
#ifndef BLUR_COLLECTOR_API_STORE_DEVICE_REGISTRY_H
#define BLUR_COLLECTOR_API_STORE_DEVICE_REGISTRY_H

#include "auth/device_registry.h"
#include "store/store.h"

namespace blur::collector {

class StoreDeviceRegistry final : public auth::DeviceRegistry {
 public:
  explicit StoreDeviceRegistry(Store& store) : store_(store) {}

  Outcome<std::optional<auth::DeviceBinding>> binding(uint64_t device_nonce) override {
    auto row = store_.device(device_nonce);
    if (!row) return row.error();
    if (!row.value()) return std::optional<auth::DeviceBinding>();
    return std::optional<auth::DeviceBinding>(binding_of(*row.value()));
  }
  Outcome<bool> has_reports(uint64_t device_nonce) override {
    return store_.has_reports(device_nonce);
  }
  Outcome<auth::DeviceBinding> bind(uint64_t device_nonce, const auth::Digest& key_sha256,
                                    int64_t now) override {
    auto row = store_.bind_device(device_nonce, key_sha256, now);
    if (!row) return row.error();
    return binding_of(row.value());
  }
  Fallible renewed(uint64_t device_nonce, int64_t now) override {
    return store_.record_renewal(device_nonce, now);
  }

 private:
  static auth::DeviceBinding binding_of(const store::DeviceRow& row) {
    return {row.enrolled_at, row.key_sha256, row.last_renewed_at};
  }
  Store& store_;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_API_STORE_DEVICE_REGISTRY_H
