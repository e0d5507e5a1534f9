// Instructions per report on a bare-metal target, counted by QEMU: run under
// `-icount shift=0`, the emulated clock advances one nanosecond per guest
// instruction, so on Cortex-M the SysTick timer (on the processor clock)
// counts instructions at a fixed ratio; on RISC-V the minstret counter
// counts retired instructions (exactly under -icount; without it QEMU
// derives it from the host's clock). The image measures the counter's ratio
// on a loop of known length, then the instructions of each Client::record()
// (randomize, durable ledger charge, durable queue append) of the minimal
// image's two metrics, grr and laplace, averaged over 256 reports each (the
// ledger's compactions included: an erase and a snapshot every few dozen
// charges), with a fixed DRBG seed so that every run counts the same.
// It prints the figures and exits 0; 1 if a step fails or the counter does
// not count instructions (run without -icount, the figures mean nothing).
#include <stdio.h>
#include <stdlib.h>

#include "blur/client.h"
#include "board_port.h"
#if defined(__arm__)
#include "cache.h"
#endif
#include "firmware_flash.h"

namespace {

#if defined(__riscv)
// minstret's low word (machine mode, where the image runs); differences of
// it are right across its wrap-around.
uint32_t read_counter() {
  uint32_t value;
  // (rv32imac names no Zicsr, which the assembler wants for csrr)
  __asm__ volatile(".option push\n.option arch, +zicsr\ncsrr %0, minstret\n.option pop"
                   : "=r"(value));
  return value;
}

void start_counter() {}

uint32_t ticks_since(uint32_t start) { return read_counter() - start; }

// 2 * n instructions (addi, bnez), plus a few.
__attribute__((noinline)) void spin(uint32_t n) {
  __asm__ volatile("1: addi %0, %0, -1\n bnez %0, 1b" : "+r"(n));
}

const char* const kCounterName = "minstret";
#else
// SysTick (ARMv6-M and ARMv7-M: the same registers), a 24-bit down counter.
volatile uint32_t* const kSystCsr = reinterpret_cast<volatile uint32_t*>(0xE000E010u);
volatile uint32_t* const kSystRvr = reinterpret_cast<volatile uint32_t*>(0xE000E014u);
volatile uint32_t* const kSystCvr = reinterpret_cast<volatile uint32_t*>(0xE000E018u);
constexpr uint32_t kMask = 0xFFFFFFu;

uint32_t read_counter() { return *kSystCvr; }

void start_counter() {
  *kSystRvr = kMask;
  *kSystCvr = 0;
  *kSystCsr = 1u | 4u;  // enabled, processor clock, no interrupt
}

uint32_t ticks_since(uint32_t start) { return (start - *kSystCvr) & kMask; }

// 2 * n instructions (subs, bne), plus a few.
__attribute__((noinline)) void spin(uint32_t n) {
#if defined(__ARM_ARCH_6M__)  // GCC's inline assembly is in divided syntax there
  __asm__ volatile("1: sub %0, #1\n bne 1b" : "+l"(n) : : "cc");
#else
  __asm__ volatile("1: subs %0, %0, #1\n bne 1b" : "+l"(n) : : "cc");
#endif
}

const char* const kCounterName = "SysTick";
#endif

uint8_t g_flash[blur::firmware::kBlockSize * blur::firmware::kBlockCount];
blur::bare_metal::BoardContext g_board;
blur::Client g_client;
uint8_t g_batch[1024];

constexpr uint32_t kSpin = 200000;
constexpr uint32_t kReportsPerMetric = 256;
constexpr uint32_t kBatchEvery = 8;  // take and acknowledge a batch every 8 reports (not counted)

// The DRBG seeded with the same bytes on every run: the same draws, so the
// same instruction counts (the randomized responses' rejection loops take
// a random number of steps). A measurement only: real firmware seeds from
// its TRNG (board_port's entropy).
blur::Status fixed_entropy(void*, uint8_t* out, size_t length) {
  for (size_t i = 0; i < length; ++i) out[i] = static_cast<uint8_t>(i * 131u + 7u);
  return blur::Status::kOk;
}

int fail(const char* step, blur::Status status) {
  printf("blur report cost: %s failed: %s\n", step, blur::status_name(status));
  return 1;
}

int run() {
  start_counter();
  uint32_t t = read_counter();
  spin(kSpin);
  const uint32_t spin_ticks = ticks_since(t);
  t = read_counter();
  spin(2 * kSpin);
  const uint32_t spin2_ticks = ticks_since(t);
  // Timed by the host's clock (QEMU without -icount), the two loops'
  // counts disagree with what follows.
#if defined(__riscv)
  // minstret counts every instruction: the longer loop retires exactly
  // 2 * kSpin more (the call's few instructions are in both).
  const uint32_t expected = 2 * kSpin, measured = spin2_ticks - spin_ticks;
#else
  // SysTick ticks every few instructions: twice the loop, twice the ticks
  // (within the timer's resolution and the call's few instructions).
  const uint32_t expected = 2 * spin_ticks, measured = spin2_ticks;
#endif
  const uint32_t disagreement = measured > expected ? measured - expected : expected - measured;
  if (spin_ticks == 0 || disagreement > 2) {
    printf("blur report cost: %s does not count instructions (%lu then %lu ticks; "
           "QEMU needs -icount shift=0)\n",
           kCounterName, static_cast<unsigned long>(spin_ticks),
           static_cast<unsigned long>(spin2_ticks));
    return 1;
  }
  // Instructions per tick, in 1/1000ths, from the difference of the two
  // loops (the call's few instructions cancel out).
  const uint64_t milli_instructions_per_tick =
      2000ull * kSpin / static_cast<uint64_t>(spin2_ticks - spin_ticks);
  printf("blur report cost: 1 %s tick = %lu.%03lu instructions\n", kCounterName,
         static_cast<unsigned long>(milli_instructions_per_tick / 1000),
         static_cast<unsigned long>(milli_instructions_per_tick % 1000));

  blur::Port port = blur::bare_metal::board_port(&g_board, g_flash, blur::firmware::flash_config());
  port.entropy = &fixed_entropy;
  blur::Status status = g_client.open(port);
  if (status != blur::Status::kNotProvisioned) return fail("opening blank storage", status);
  blur::LedgerPolicy policy;
  policy.lifetime_cap_micros = 1000 * blur::kEpsilonMicrosPerNat;
  status = g_client.provision(policy);
  if (status != blur::Status::kOk) return fail("provisioning", status);
  struct Metric {
    uint32_t id;
    blur::MechanismId mechanism;
    uint32_t domain_size;
    const char* name;
    uint64_t ticks;
  } metrics[] = {{2, blur::MechanismId::kGeneralizedRandomizedResponse, 8, "grr, d = 8", 0},
                 {6, blur::MechanismId::kDiscreteLaplace, 101, "laplace, d = 101", 0}};
  for (const Metric& m : metrics) {
    status = g_client.add_metric(m.id, m.mechanism, blur::kEpsilonMicrosPerNat, m.domain_size);
    if (status != blur::Status::kOk) return fail("configuring a metric", status);
  }
  for (uint32_t i = 0; i < kReportsPerMetric; ++i) {
    for (Metric& m : metrics) {
      t = read_counter();
      status = g_client.record(m.id, i % m.domain_size);
      m.ticks += ticks_since(t);
      if (status != blur::Status::kOk) return fail("recording", status);
    }
    if ((i + 1) % kBatchEvery == 0) {
      size_t written = 0, count = 0;
      uint64_t token = 0;
      status = g_client.pending_batch(g_batch, sizeof g_batch, &written, &count, &token);
      if (status != blur::Status::kOk) return fail("taking a batch", status);
      status = g_client.acknowledge(token);
      if (status != blur::Status::kOk) return fail("acknowledging", status);
    }
  }
  for (const Metric& m : metrics) {
    const uint64_t instructions = m.ticks * milli_instructions_per_tick / 1000 / kReportsPerMetric;
    printf("blur report cost: %lu instructions per report (%s; Client::record, mean of %lu)\n",
           static_cast<unsigned long>(instructions), m.name,
           static_cast<unsigned long>(kReportsPerMetric));
  }
  return 0;
}

}  // namespace

int main() {
#if defined(__ARM_ARCH_7EM__) && defined(BLUR_FIRMWARE_DATA_CACHE)
  blur::bare_metal::enable_caches();
#endif
  exit(run());
}
