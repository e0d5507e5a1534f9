// Enrollment's device bindings on PostgreSQL (store/backend.h: DeviceRow).
#include <algorithm>

#include "store/postgres/pg_session.h"
#include "store/postgres/postgres_backend.h"
#include "store/postgres/postgres_sql.h"

namespace blur::collector::store {

using pg::Params;

Outcome<std::optional<DeviceRow>> PostgresConnection::find_device(uint64_t device_nonce) {
  if (auto ok = usable(); !ok) return ok.error();
  auto result =
      session_->run(pg::sql::kFindDevice, Params().int64(static_cast<int64_t>(device_nonce)));
  if (!result) return result.error();
  if (pg::rows(result->get()) == 0) return std::optional<DeviceRow>();
  DeviceRow row;
  row.device_nonce = device_nonce;
  row.enrolled_at = pg::field_int64(result->get(), 0, 0);
  const std::string key = pg::field_bytes(result->get(), 0, 1);
  if (key.size() != row.key_sha256.size()) {
    return unavailable("device " + std::to_string(device_nonce) +
                       " has a corrupt key digest in the database");
  }
  std::copy(key.begin(), key.end(), row.key_sha256.begin());
  row.last_renewed_at = pg::field_int64(result->get(), 0, 2);
  return std::optional<DeviceRow>(row);
}

Outcome<bool> PostgresConnection::insert_device(const DeviceRow& row) {
  if (auto ok = usable(); !ok) return ok.error();
  auto result = session_->run(
      pg::sql::kInsertDevice,
      Params()
          .int64(static_cast<int64_t>(row.device_nonce))
          .int64(row.enrolled_at)
          .text(std::string(row.key_sha256.begin(), row.key_sha256.end()))
          .int64(row.last_renewed_at));
  if (!result) return result.error();
  return pg::affected_rows(result->get()) == 1;
}

Fallible PostgresConnection::set_device_renewed(uint64_t device_nonce, int64_t renewed_at) {
  if (auto ok = usable(); !ok) return ok;
  auto result = session_->run(pg::sql::kSetDeviceRenewed,
                              Params().int64(static_cast<int64_t>(device_nonce)).int64(renewed_at));
  if (!result) return result.error();
  return done();
}

Outcome<bool> PostgresConnection::has_reports(uint64_t device_nonce) {
  if (auto ok = usable(); !ok) return ok.error();
  auto result =
      session_->run(pg::sql::kHasReports, Params().int64(static_cast<int64_t>(device_nonce)));
  if (!result) return result.error();
  return pg::field_int64(result->get(), 0, 0) > 0;
}

Outcome<uint64_t> PostgresConnection::count_devices_enrolled_since(int64_t since) {
  if (auto ok = usable(); !ok) return ok.error();
  auto result = session_->run(pg::sql::kCountDevicesSince, Params().int64(since));
  if (!result) return result.error();
  return static_cast<uint64_t>(pg::field_int64(result->get(), 0, 0));
}

}  // namespace blur::collector::store
