// Blur on a Cortex-M4 (QEMU mps2-an386): a firmware image that links the SDK
// with mbedTLS and nanopb, provisions the privacy ledger on first boot,
// records a few randomized reports, encodes them as one batch, and prints it
// over semihosting. Every byte of memory is static or on the stack: the
// image links no malloc, free, _sbrk or operator new (a test checks).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blur/binary_randomized_response.h"
#include "blur/ledger.h"
#include "blur/report.h"
#include "blur/report_encoding.h"
#include "blur/rng.h"
#include "board_port.h"

namespace {

constexpr uint32_t kBlockSize = 512;
constexpr uint32_t kBlockCount = 2;
constexpr uint32_t kMetricDoorOpened = 1;
constexpr size_t kReports = 4;

uint8_t g_flash[kBlockSize * kBlockCount];
blur::cortex_m::BoardContext g_board;
blur::Rng g_rng;
blur::Ledger g_ledger;
blur::Report g_reports[kReports];
uint8_t g_batch[blur::kBatchHeaderSize + kReports * blur::kMaxEncodedScalarReportSize];

// Stack high-water mark by painting (QEMU has no cycle counter; size and
// stack are what can be measured here).
extern "C" char __stack[];
extern "C" char __stack_size[];
constexpr uint32_t kPaint = 0xA5A5A5A5u;

__attribute__((noinline)) void paint_stack() {
  char* bottom = __stack - reinterpret_cast<uintptr_t>(__stack_size);
  char* here = static_cast<char*>(__builtin_frame_address(0)) - 256;
  for (uint32_t* p = reinterpret_cast<uint32_t*>(bottom); reinterpret_cast<char*>(p) < here; ++p) {
    *p = kPaint;
  }
}

uint32_t stack_high_water() {
  const uint32_t* p =
      reinterpret_cast<const uint32_t*>(__stack - reinterpret_cast<uintptr_t>(__stack_size));
  while (*p == kPaint) ++p;
  return static_cast<uint32_t>(__stack - reinterpret_cast<const char*>(p));
}

int fail(const char* step, blur::Status status) {
  printf("blur firmware: %s failed: %s\n", step, blur::status_name(status));
  return 1;
}

int run() {
  const blur::Port port = blur::cortex_m::board_port(&g_board, g_flash, kBlockSize, kBlockCount);
  static const uint8_t kPersonalization[] = "blur-firmware-m4";
  blur::Status status = g_rng.seed(port, kPersonalization, sizeof kPersonalization - 1);
  if (status != blur::Status::kOk) return fail("seeding the DRBG", status);

  status = g_ledger.open(port);
  if (status == blur::Status::kNotProvisioned) {
    uint64_t nonce = 0;
    status = g_rng.next_u64(&nonce);
    if (status != blur::Status::kOk) return fail("drawing the device nonce", status);
    status = g_ledger.provision(port, blur::LedgerPolicy{8 * blur::kEpsilonMicrosPerNat}, nonce);
    if (status != blur::Status::kOk) return fail("provisioning the ledger", status);
    printf("blur firmware: ledger provisioned, lifetime budget 8 nats\n");
  } else if (status != blur::Status::kOk) {
    return fail("opening the ledger", status);
  }

  const auto rr = blur::BinaryRandomizedResponse::create(blur::kEpsilonMicrosPerNat);
  if (!rr.ok()) return fail("configuring randomized response", rr.status());
  const bool door_opened[kReports] = {true, false, false, true};
  for (size_t i = 0; i < kReports; ++i) {
    status = blur::make_report(g_ledger, g_rng, rr.value(), kMetricDoorOpened, door_opened[i],
                               &g_reports[i]);
    if (status != blur::Status::kOk) return fail("reporting", status);
  }

  size_t written = 0;
  status = blur::encode_batch(g_ledger.device_nonce(), g_reports, kReports, g_batch, sizeof g_batch,
                              &written);
  if (status != blur::Status::kOk) return fail("encoding", status);

  printf("blur firmware: batch of %u reports, %u bytes, spent %lu of %lu micro-nats\n",
         static_cast<unsigned>(kReports), static_cast<unsigned>(written),
         static_cast<unsigned long>(g_ledger.spent_micros()),
         static_cast<unsigned long>(g_ledger.lifetime_cap_micros()));
  for (size_t i = 0; i < written; ++i) printf("%02x", g_batch[i]);
  printf("\n");
  return 0;
}

}  // namespace

int main() {
  paint_stack();
  const int result = run();
  printf("blur firmware: stack high-water mark %lu bytes\n",
         static_cast<unsigned long>(stack_high_water()));
  exit(result);
}
