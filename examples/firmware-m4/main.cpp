// Blur on a Cortex-M (QEMU: mps2-an386 for the M4, microbit for the M0+,
// mps2-an505 for the M33, mps2-an500 for the M7): a firmware image with the whole
// device SDK (blur::Client: CTR_DRBG, the persisted ledger with its caps,
// the persisted report queue, nanopb) and one mechanism of each payload
// kind (or, built with BLUR_FIRMWARE_MINIMAL, one frequency oracle and one
// numeric mechanism). It provisions the ledger on first boot, records a few values per
// metric, takes the pending batch, acknowledges it, and prints it over
// semihosting. Every byte of memory is static or on the stack: the image
// links no malloc, free, _sbrk or operator new (a test checks).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blur/client.h"
#include "board_port.h"
#if defined(__arm__)
#include "cache.h"
#endif
#include "firmware_flash.h"

namespace {

using blur::firmware::flash_config;
using blur::firmware::kBlockCount;
using blur::firmware::kBlockSize;

struct MetricSetup {
  uint32_t id;
  blur::MechanismId mechanism;
  uint32_t epsilon_micros;
  uint32_t domain_size;
};
#if defined(BLUR_FIRMWARE_MINIMAL)
// One mechanism of each kind: a frequency oracle and a numeric mechanism
// (the image the SDK's size goals are measured on).
constexpr MetricSetup kMetrics[] = {
    {2, blur::MechanismId::kGeneralizedRandomizedResponse, 2000000, 8},  // screen shown
    {6, blur::MechanismId::kDiscreteLaplace, 1000000, 101},              // battery %
};
constexpr uint32_t kValues[] = {5, 87};
#else
// One mechanism of each payload kind: a bit, an index, a bit vector, a
// hashed bucket, a Bloom filter, a number.
constexpr MetricSetup kMetrics[] = {
    {1, blur::MechanismId::kBinaryRandomizedResponse, 1000000, 2},       // door opened
    {2, blur::MechanismId::kGeneralizedRandomizedResponse, 2000000, 8},  // screen shown
    {3, blur::MechanismId::kOptimizedUnaryEncoding, 2000000, 32},        // error code
    {4, blur::MechanismId::kOptimizedLocalHashing, 2000000, 1024},       // app id
    {5, blur::MechanismId::kRappor, 2000000, 256},                       // emoji
    {6, blur::MechanismId::kDiscreteLaplace, 1000000, 101},              // battery %
};
constexpr uint32_t kValues[] = {1, 5, 17, 700, 42, 87};
#endif

// The stand-in for the board's flash: in RAM on QEMU, in its own section so
// the size report leaves it out of the image's RAM (size_breakdown.py).
__attribute__((section(".bss.blur_emulated_storage"))) uint8_t g_flash[kBlockSize * kBlockCount];
blur::bare_metal::BoardContext g_board;
blur::Client g_client;
#if defined(BLUR_FIRMWARE_MINIMAL)
uint8_t g_batch[256];  // two reports and the batch header
#else
uint8_t g_batch[1024];
#endif

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
#if defined(BLUR_FIRMWARE_STORAGE_FILE)
  const blur::Port port = blur::bare_metal::board_port_persistent(&g_board, g_flash, flash_config(),
                                                                BLUR_FIRMWARE_STORAGE_FILE);
#else
  const blur::Port port = blur::bare_metal::board_port(&g_board, g_flash, flash_config());
#endif
  printf("blur firmware: flash of %u blocks of %u bytes, program unit %u bytes (%s)\n",
         static_cast<unsigned>(port.block_count), static_cast<unsigned>(port.block_size),
         static_cast<unsigned>(port.prog_size), BLUR_FIRMWARE_ECC ? "ECC" : "NOR");
  blur::Status status = g_client.open(port);
  if (status == blur::Status::kNotProvisioned) {
    blur::LedgerPolicy policy;
    policy.lifetime_cap_micros = 20 * blur::kEpsilonMicrosPerNat;
    policy.window_seconds = 86400;
    policy.window_allowance_micros = 12 * blur::kEpsilonMicrosPerNat;
    policy.metric_caps[0] = {1, 2 * blur::kEpsilonMicrosPerNat};
    policy.metric_cap_count = 1;
    status = g_client.provision(policy);
    if (status != blur::Status::kOk) return fail("provisioning the ledger", status);
    printf("blur firmware: ledger provisioned: 20 nats for life, 12 per day, 2 for metric 1\n");
  } else if (status != blur::Status::kOk) {
    return fail("opening the device state", status);
  }
  for (const MetricSetup& m : kMetrics) {
    status = g_client.add_metric(m.id, m.mechanism, m.epsilon_micros, m.domain_size);
    if (status != blur::Status::kOk) return fail("configuring a metric", status);
  }
  for (size_t i = 0; i < sizeof kMetrics / sizeof kMetrics[0]; ++i) {
    status = g_client.record(kMetrics[i].id, kValues[i]);
    if (status != blur::Status::kOk) return fail("recording", status);
  }
  size_t written = 0, count = 0;
  uint64_t token = 0;
  status = g_client.pending_batch(g_batch, sizeof g_batch, &written, &count, &token);
  if (status != blur::Status::kOk) return fail("taking the pending batch", status);
  printf("blur firmware: batch of %u reports, %u bytes, spent %lu of %lu micro-nats\n",
         static_cast<unsigned>(count), static_cast<unsigned>(written),
         static_cast<unsigned long>(g_client.ledger().spent_micros()),
         static_cast<unsigned long>(g_client.ledger().lifetime_cap_micros()));
  for (size_t i = 0; i < written; ++i) printf("%02x", g_batch[i]);
  printf("\n");
  // (A real device sends the batch and acknowledges after the collector's 200.)
  status = g_client.acknowledge(token);
  if (status != blur::Status::kOk) return fail("acknowledging", status);
  printf("blur firmware: acknowledged; %u reports pending\n",
         static_cast<unsigned>(g_client.queue().pending_count()));
  return 0;
}

}  // namespace

int main() {
  paint_stack();
#if defined(__ARM_ARCH_7EM__) && defined(BLUR_FIRMWARE_DATA_CACHE)
  // Cortex-M7: data and instruction caches on, as firmware runs them.
  printf("blur firmware: data cache %s\n",
         blur::bare_metal::enable_caches() ? "on" : "enabled, but the board model has none (reads 0)");
#endif
  const int result = run();
  printf("blur firmware: stack high-water mark %lu bytes; client object %lu bytes\n",
         static_cast<unsigned long>(stack_high_water()),
         static_cast<unsigned long>(sizeof g_client));
  exit(result);
}
