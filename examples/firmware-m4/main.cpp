// Blur on a Cortex-M4 (QEMU mps2-an386): a firmware image with the whole
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

namespace {

// RAM-emulated flash shaped like an STM32L4's: 2 KiB pages, programmed in
// 8-byte ECC words that refuse a second program. Ledger on blocks 0-1, the
// report queue on 2-5 (Client::open's default partitions).
constexpr uint32_t kBlockSize = 2048;
constexpr uint32_t kBlockCount = 6;
blur::flash::Config flash_config() {
  blur::flash::Config config;
  config.block_size = kBlockSize;
  config.block_count = kBlockCount;
  config.prog_size = 8;
  config.erase_value = 0xFF;
  config.refuse_second_program = true;
  return config;
}

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

uint8_t g_flash[kBlockSize * kBlockCount];
blur::cortex_m::BoardContext g_board;
blur::Client g_client;
uint8_t g_batch[1024];

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

#if defined(__riscv)
// Instructions retired (the minstret counter; the image runs in machine
// mode). QEMU counts them exactly when run with -icount; without it the
// counter follows the host's clock and the figure means nothing.
uint64_t instructions_retired() {
  uint32_t high, low, again;
  do {  // (rv32imac names no Zicsr, which the assembler wants for csrr)
    __asm__ volatile(
        ".option push\n.option arch, +zicsr\n"
        "csrr %0, minstreth\ncsrr %1, minstret\ncsrr %2, minstreth\n"
        ".option pop"
        : "=r"(high), "=r"(low), "=r"(again));
  } while (high != again);
  return (static_cast<uint64_t>(high) << 32) | low;
}
#endif

int fail(const char* step, blur::Status status) {
  printf("blur firmware: %s failed: %s\n", step, blur::status_name(status));
  return 1;
}

int run() {
#if defined(BLUR_FIRMWARE_STORAGE_FILE)
  const blur::Port port = blur::cortex_m::board_port_persistent(&g_board, g_flash, flash_config(),
                                                                BLUR_FIRMWARE_STORAGE_FILE);
#else
  const blur::Port port = blur::cortex_m::board_port(&g_board, g_flash, flash_config());
#endif
  printf("blur firmware: flash of %u blocks of %u bytes, program unit %u bytes (ECC)\n",
         static_cast<unsigned>(port.block_count), static_cast<unsigned>(port.block_size),
         static_cast<unsigned>(port.prog_size));
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
#if defined(__riscv)
  const uint64_t before = instructions_retired();
#endif
  for (size_t i = 0; i < sizeof kMetrics / sizeof kMetrics[0]; ++i) {
    status = g_client.record(kMetrics[i].id, kValues[i]);
    if (status != blur::Status::kOk) return fail("recording", status);
  }
#if defined(__riscv)
  const uint64_t instructions = instructions_retired() - before;
  printf("blur firmware: %u reports recorded in %lu instructions (exact under QEMU -icount)\n",
         static_cast<unsigned>(sizeof kMetrics / sizeof kMetrics[0]),
         static_cast<unsigned long>(instructions));
#endif
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
  const int result = run();
  printf("blur firmware: stack high-water mark %lu bytes; client object %lu bytes\n",
         static_cast<unsigned long>(stack_high_water()),
         static_cast<unsigned long>(sizeof g_client));
  exit(result);
}
