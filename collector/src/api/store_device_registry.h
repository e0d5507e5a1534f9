// Enrollment's device registry (auth/device_registry.h) over the Store. The
// enrollment times it reads or binds go to `known` too (if given), so that
// the device's first batch needs no read of its own (enrollment_times.h).
#ifndef BLUR_COLLECTOR_API_STORE_DEVICE_REGISTRY_H
#define BLUR_COLLECTOR_API_STORE_DEVICE_REGISTRY_H

#include "auth/device_registry.h"
#include "ingest/enrollment_times.h"
#include "store/store.h"

namespace blur::collector {

class StoreDeviceRegistry final : public auth::DeviceRegistry {
 public:
  explicit StoreDeviceRegistry(Store& store, EnrollmentTimes* known = nullptr)
      : store_(store), known_(known) {}

  Outcome<std::optional<auth::DeviceBinding>> binding(uint64_t device_nonce) override {
    auto row = store_.device(device_nonce);
    if (!row) return row.error();
    if (!row.value()) return std::optional<auth::DeviceBinding>();
    return std::optional<auth::DeviceBinding>(binding_of(device_nonce, *row.value()));
  }
  Outcome<bool> has_reports(uint64_t device_nonce) override {
    return store_.has_reports(device_nonce);
  }
  Outcome<auth::DeviceBinding> bind(uint64_t device_nonce, const auth::Digest& key_sha256,
                                    int64_t now) override {
    auto row = store_.bind_device(device_nonce, key_sha256, now);
    if (!row) return row.error();
    return binding_of(device_nonce, row.value());
  }
  Fallible renewed(uint64_t device_nonce, int64_t now) override {
    return store_.record_renewal(device_nonce, now);
  }

 private:
  auth::DeviceBinding binding_of(uint64_t device_nonce, const store::DeviceRow& row) {
    if (known_ != nullptr) known_->remember(device_nonce, row.enrolled_at);
    return {row.enrolled_at, row.key_sha256, row.last_renewed_at};
  }
  Store& store_;
  EnrollmentTimes* known_;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_API_STORE_DEVICE_REGISTRY_H
