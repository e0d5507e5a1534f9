/* A C program built against the installed package with nothing but
 *   cc pkgconfig_app.c $(pkg-config --cflags --libs blur)
 * Its port keeps the flash in RAM (4 KiB x 8, NOR rules). It provisions 2
 * nats, records three rr values of 1 nat (the third is refused), and checks
 * the budget. Exits 0 only if every check holds. */
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "blur/blur.h"

enum { kBlockSize = 4096, kBlockCount = 8 };
static uint8_t flash[kBlockCount][kBlockSize];
static int failures;

static void check(int ok, const char* what) {
  if (!ok) {
    printf("FAILED: %s\n", what);
    ++failures;
  }
}

static int entropy(void* context, uint8_t* out, size_t length) {
  (void)context;
  return getrandom(out, length, 0) == (ssize_t)length ? 0 : -1;
}
static int flash_read(void* context, uint32_t block, uint32_t offset, uint8_t* out, uint32_t size) {
  (void)context;
  memcpy(out, &flash[block][offset], size);
  return 0;
}
static int flash_prog(void* context, uint32_t block, uint32_t offset, const uint8_t* data,
                      uint32_t size) {
  (void)context;
  for (uint32_t i = 0; i < size; ++i) flash[block][offset + i] &= data[i];
  return 0;
}
static int flash_erase(void* context, uint32_t block) {
  (void)context;
  memset(flash[block], 0xFF, kBlockSize);
  return 0;
}
static int flash_sync(void* context) {
  (void)context;
  return 0;
}

int main(void) {
  static _Alignas(16) uint8_t memory[BLUR_CLIENT_MEMORY_SIZE];
  memset(flash, 0xFF, sizeof flash);
  const blur_port port = {.entropy = entropy, .read = flash_read, .prog = flash_prog,
                          .erase = flash_erase, .sync = flash_sync,
                          .block_size = kBlockSize, .block_count = kBlockCount};
  blur_client* client = NULL;
  check(blur_open(memory, sizeof memory, &port, &client) == BLUR_NOT_PROVISIONED, "blank storage");
  blur_policy policy;
  memset(&policy, 0, sizeof policy);
  policy.lifetime_cap_micros = 2000000;
  check(blur_provision(client, &policy) == BLUR_OK, "provision");
  const blur_metric metric = {.metric_id = 1, .mechanism = BLUR_MECHANISM_RR,
                              .epsilon_micros = 1000000, .domain_size = 2};
  check(blur_add_metric(client, &metric) == BLUR_OK, "add rr");
  check(blur_record(client, 1, 1) == BLUR_OK, "first record");
  check(blur_record(client, 1, 0) == BLUR_OK, "second record");
  const blur_status refused = blur_record(client, 1, 1);
  check(refused == BLUR_BUDGET_EXHAUSTED, "the third record is refused");
  blur_budget budget;
  check(blur_get_budget(client, &budget) == BLUR_OK, "budget");
  check(budget.spent_micros == 2000000 && budget.pending_reports == 2, "2 nats spent, 2 pending");
  printf("pkg-config app: spent %llu of %llu micro-nats, %u reports pending, third record: %s\n",
         (unsigned long long)budget.spent_micros, (unsigned long long)budget.lifetime_cap_micros,
         (unsigned)budget.pending_reports, blur_status_name(refused));
  return failures == 0 ? 0 : 1;
}
