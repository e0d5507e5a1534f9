// A device built outside Blur's tree, from the installed package (and from
// a parent project through add_subdirectory): provision, record until the
// budget refuses, batch, reboot, and the budget is still spent. Exits 0 only
// if every check holds; each failing check is printed.
#include <stdio.h>

#include "blur/client.h"
#include "blur/version.h"
#include "sim_port.h"

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    printf("FAILED: %s\n", what);
    ++failures;
  }
}

blur::sim::SimPort port(2026);
blur::Client device;  // static: a Client holds its buffers (no heap)
blur::Client rebooted;

}  // namespace

int main() {
  using blur::Status;
  constexpr uint64_t kNat = blur::kEpsilonMicrosPerNat;
  printf("consumer: Blur SDK %u.%u.%u\n", static_cast<unsigned>(blur::kSdkVersionMajor),
         static_cast<unsigned>(blur::kSdkVersionMinor), static_cast<unsigned>(blur::kSdkVersionPatch));

  check(device.open(port.port()) == Status::kNotProvisioned, "blank storage is not provisioned");
  blur::LedgerPolicy policy;
  policy.lifetime_cap_micros = 3 * kNat;
  check(device.provision(policy) == Status::kOk, "provision");
  check(device.add_metric(1, blur::MechanismId::kBinaryRandomizedResponse, kNat, 2) == Status::kOk,
        "rr is built");
  check(device.add_metric(2, blur::MechanismId::kGeneralizedRandomizedResponse, kNat, 16) ==
            Status::kNotBuilt,
        "grr was left out by blur_client_library(MECHANISMS rr laplace)");

  for (uint32_t i = 0; i < 3; ++i) check(device.record(1, i % 2) == Status::kOk, "record within budget");
  check(device.record(1, 1) == Status::kBudgetExhausted, "the fourth report is refused");

  static uint8_t batch[1024];
  size_t written = 0, count = 0;
  uint64_t token = 0;
  check(device.pending_batch(batch, sizeof batch, &written, &count, &token) == Status::kOk,
        "pending batch");
  check(count == 3 && written > 0, "three reports pending");

  // Reboot: a second Client on the same flash.
  check(rebooted.open(port.port()) == Status::kOk, "reopen");
  check(rebooted.ledger().spent_micros() == 3 * kNat, "the budget spent survives the reboot");
  check(rebooted.add_metric(1, blur::MechanismId::kBinaryRandomizedResponse, kNat, 2) == Status::kOk,
        "rr after reboot");
  check(rebooted.record(1, 0) == Status::kBudgetExhausted, "still refused after the reboot");

  printf("consumer: %u reports (%u bytes), spent %u of %u micro-nats, %d failures\n",
         static_cast<unsigned>(count), static_cast<unsigned>(written),
         static_cast<unsigned>(rebooted.ledger().spent_micros()),
         static_cast<unsigned>(policy.lifetime_cap_micros), failures);
  return failures == 0 ? 0 : 1;
}
