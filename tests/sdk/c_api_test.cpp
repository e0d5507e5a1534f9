// The C API (blur.h) on a port written in C (c_api/ram_port.c): the
// defaults of a zeroed port, the monotonic counter's rollback protection,
// caller-chosen partitions, the program unit and erased value, the version.
#include <gtest/gtest.h>
#include <stdio.h>
#include <string.h>

#include "blur/blur.h"
#include "blur/version.h"
#include "ram_port.h"

namespace {

constexpr uint64_t kNat = 1000000;

alignas(16) uint8_t memory[BLUR_CLIENT_MEMORY_SIZE];
ram_port ram;
uint8_t snapshot[sizeof ram.flash];

blur_policy policy_of(uint64_t lifetime_nats) {
  blur_policy policy;
  memset(&policy, 0, sizeof policy);
  policy.lifetime_cap_micros = lifetime_nats * kNat;
  return policy;
}

const blur_metric kRr = {1, BLUR_MECHANISM_RR, static_cast<uint32_t>(kNat), 2, 0, 0};

// Opens the device on `port` (the default layout), provisions it if blank
// and configures metric 1 (rr, 1 nat per report).
blur_client* start(const blur_port& port, blur_status* status) {
  blur_client* client = nullptr;
  *status = blur_open(memory, sizeof memory, &port, &client);
  if (*status == BLUR_NOT_PROVISIONED) {
    const blur_policy policy = policy_of(10);
    *status = blur_provision(client, &policy);
  }
  if (*status == BLUR_OK) *status = blur_add_metric(client, &kRr);
  return client;
}

uint64_t spent(const blur_client* client) {
  blur_budget budget;
  if (blur_get_budget(client, &budget) != BLUR_OK) return UINT64_MAX;
  return budget.spent_micros;
}

bool block_erased(uint32_t block) {
  for (uint32_t i = 0; i < RAM_PORT_BLOCK_SIZE; ++i) {
    if (ram.flash[block * RAM_PORT_BLOCK_SIZE + i] != ram.erased) return false;
  }
  return true;
}

TEST(CApi, ZeroedNewFieldsAreTheDefaults) {
  ram_port_init(&ram, 6, 0xFF, 1);
  const blur_port port = ram_port_port(&ram);
  EXPECT_EQ(port.counter_read, nullptr);
  EXPECT_EQ(port.prog_size, 0u);
  EXPECT_EQ(port.erased_zero, 0u);
  blur_status status;
  blur_client* client = start(port, &status);
  ASSERT_EQ(status, BLUR_OK);
  ASSERT_EQ(blur_record(client, 1, 1), BLUR_OK);
  EXPECT_EQ(spent(client), kNat);
  client = start(port, &status);  // a reboot
  ASSERT_EQ(status, BLUR_OK);
  EXPECT_EQ(spent(client), kNat);
}

TEST(CApi, PolicyTakesUpToLedgerMaxMetricsCaps) {
  ram_port_init(&ram, 6, 0xFF, 2);
  const blur_port port = ram_port_port(&ram);
  blur_client* client = nullptr;
  ASSERT_EQ(blur_open(memory, sizeof memory, &port, &client), BLUR_NOT_PROVISIONED);
  blur_policy policy = policy_of(10);
  for (uint32_t i = 0; i < BLUR_LEDGER_MAX_METRICS; ++i) policy.metric_caps[i] = {i + 1, kNat};
  policy.metric_cap_count = BLUR_LEDGER_MAX_METRICS + 1;
  EXPECT_EQ(blur_provision(client, &policy), BLUR_INVALID_ARGUMENT);
  policy.metric_cap_count = BLUR_LEDGER_MAX_METRICS;
  EXPECT_EQ(blur_provision(client, &policy), BLUR_OK);
}

// The counter lives outside the flash: restoring an older flash image (a
// reflash, a copied storage file) leaves it ahead of the image's ledger.
TEST(CApi, CounterRefusesARestoredFlashImage) {
  ram_port_init(&ram, 6, 0xFF, 3);
  ram.counter_enabled = 1;
  const blur_port port = ram_port_port(&ram);
  blur_status status;
  blur_client* client = start(port, &status);
  ASSERT_EQ(status, BLUR_OK);
  ASSERT_EQ(blur_record(client, 1, 0), BLUR_OK);
  memcpy(snapshot, ram.flash, sizeof snapshot);
  ASSERT_EQ(blur_record(client, 1, 1), BLUR_OK);
  EXPECT_EQ(spent(client), 2 * kNat);
  EXPECT_GT(ram.counter, 0u);

  memcpy(ram.flash, snapshot, sizeof snapshot);  // the old image, one nat less spent
  client = nullptr;
  EXPECT_EQ(blur_open(memory, sizeof memory, &port, &client), BLUR_STORAGE_ROLLBACK);
  EXPECT_EQ(client, nullptr);
}

// What the counter prevents: without one, the restored image is believed.
TEST(CApi, WithoutCounterARestoredImageRestoresTheBudget) {
  ram_port_init(&ram, 6, 0xFF, 4);
  const blur_port port = ram_port_port(&ram);
  blur_status status;
  blur_client* client = start(port, &status);
  ASSERT_EQ(status, BLUR_OK);
  ASSERT_EQ(blur_record(client, 1, 0), BLUR_OK);
  memcpy(snapshot, ram.flash, sizeof snapshot);
  ASSERT_EQ(blur_record(client, 1, 1), BLUR_OK);
  memcpy(ram.flash, snapshot, sizeof snapshot);
  client = start(port, &status);
  ASSERT_EQ(status, BLUR_OK);
  EXPECT_EQ(spent(client), kNat);
}

TEST(CApi, CounterCallbacksComeInPairsAndTheirFailureFailsClosed) {
  ram_port_init(&ram, 6, 0xFF, 5);
  ram.counter_enabled = 1;
  blur_port port = ram_port_port(&ram);
  blur_client* client = nullptr;
  blur_port half = port;
  half.counter_advance = nullptr;
  EXPECT_EQ(blur_open(memory, sizeof memory, &half, &client), BLUR_INVALID_ARGUMENT);
  half = port;
  half.counter_read = nullptr;
  EXPECT_EQ(blur_open(memory, sizeof memory, &half, &client), BLUR_INVALID_ARGUMENT);

  blur_status status;
  client = start(port, &status);
  ASSERT_EQ(status, BLUR_OK);
  ram.counter_fails = 1;
  EXPECT_EQ(blur_record(client, 1, 1), BLUR_STORAGE_FAILURE);
  client = nullptr;
  EXPECT_EQ(blur_open(memory, sizeof memory, &port, &client), BLUR_STORAGE_FAILURE);
  EXPECT_EQ(client, nullptr);
}

TEST(CApi, OverlappingPartitionsAreRefused) {
  ram_port_init(&ram, 8, 0xFF, 6);
  const blur_port port = ram_port_port(&ram);
  blur_client* client = nullptr;
  const blur_partition ledger = {0, 2};
  const blur_partition overlapping[] = {{1, 4}, {0, 3}, {0, 8}};
  for (const blur_partition& queue : overlapping) {
    EXPECT_EQ(blur_open_partitioned(memory, sizeof memory, &port, &ledger, &queue, &client),
              BLUR_PARTITIONS_OVERLAP);
    EXPECT_EQ(blur_open_partitioned(memory, sizeof memory, &port, &queue, &ledger, &client),
              BLUR_PARTITIONS_OVERLAP);
  }
  EXPECT_EQ(client, nullptr);
  for (uint32_t block = 0; block < 8; ++block) EXPECT_TRUE(block_erased(block)) << block;
}

TEST(CApi, PartitionsMustBeGivenAndFitTheStorage) {
  ram_port_init(&ram, 8, 0xFF, 7);
  const blur_port port = ram_port_port(&ram);
  blur_client* client = nullptr;
  const blur_partition ledger = {0, 2};
  const blur_partition queue = {2, 6};
  const blur_partition too_far = {2, 7};
  EXPECT_EQ(blur_open_partitioned(memory, sizeof memory, &port, nullptr, &queue, &client),
            BLUR_INVALID_ARGUMENT);
  EXPECT_EQ(blur_open_partitioned(memory, sizeof memory, &port, &ledger, nullptr, &client),
            BLUR_INVALID_ARGUMENT);
  EXPECT_EQ(blur_open_partitioned(memory, sizeof memory, &port, &ledger, &too_far, &client),
            BLUR_INVALID_ARGUMENT);
  EXPECT_EQ(client, nullptr);
}

// The queue first, the ledger at the end: the device lives where it is told.
TEST(CApi, ChosenPartitionsHoldTheDevice) {
  ram_port_init(&ram, 8, 0xFF, 8);
  const blur_port port = ram_port_port(&ram);
  const blur_partition queue = {0, 5};
  const blur_partition ledger = {6, 2};  // block 5 left unused
  blur_client* client = nullptr;
  ASSERT_EQ(blur_open_partitioned(memory, sizeof memory, &port, &ledger, &queue, &client),
            BLUR_NOT_PROVISIONED);
  const blur_policy policy = policy_of(10);
  ASSERT_EQ(blur_provision(client, &policy), BLUR_OK);
  ASSERT_EQ(blur_add_metric(client, &kRr), BLUR_OK);
  ASSERT_EQ(blur_record(client, 1, 1), BLUR_OK);
  EXPECT_FALSE(block_erased(6) && block_erased(7));  // the ledger's record
  EXPECT_TRUE(block_erased(5));

  client = nullptr;
  ASSERT_EQ(blur_open_partitioned(memory, sizeof memory, &port, &ledger, &queue, &client), BLUR_OK);
  blur_budget budget;
  ASSERT_EQ(blur_get_budget(client, &budget), BLUR_OK);
  EXPECT_EQ(budget.spent_micros, kNat);
  EXPECT_EQ(budget.pending_reports, 1u);
}

TEST(CApi, ErasedZeroIsZeroOrOne) {
  ram_port_init(&ram, 6, 0xFF, 9);
  blur_port port = ram_port_port(&ram);
  port.erased_zero = 2;
  blur_client* client = nullptr;
  EXPECT_EQ(blur_open(memory, sizeof memory, &port, &client), BLUR_INVALID_ARGUMENT);
}

// prog_size = 8 reaches the SDK: every prog call starts on an 8-byte
// boundary and covers whole 8-byte words (ECC flash refuses anything else).
TEST(CApi, ProgramUnitIsHonoured) {
  ram_port_init(&ram, 6, 0xFF, 10);
  ram.prog_size = 8;
  const blur_port port = ram_port_port(&ram);
  ASSERT_EQ(port.prog_size, 8u);
  blur_status status;
  blur_client* client = start(port, &status);
  ASSERT_EQ(status, BLUR_OK);
  for (uint32_t i = 0; i < 3; ++i) ASSERT_EQ(blur_record(client, 1, i % 2), BLUR_OK);
  ASSERT_EQ(blur_acknowledge(client, 1), BLUR_OK);
  client = start(port, &status);
  ASSERT_EQ(status, BLUR_OK);
  EXPECT_EQ(spent(client), 3 * kNat);
  EXPECT_GT(ram.programs, 0u);
  EXPECT_EQ(ram.misaligned_programs, 0u);
}

// erased_zero = 1 reaches the SDK: flash whose erased bytes read 0x00.
TEST(CApi, ErasedZeroFlashWorks) {
  ram_port_init(&ram, 6, 0x00, 11);
  const blur_port port = ram_port_port(&ram);
  ASSERT_EQ(port.erased_zero, 1u);
  blur_status status;
  blur_client* client = start(port, &status);  // blank: provisioned here
  ASSERT_EQ(status, BLUR_OK);
  ASSERT_EQ(blur_record(client, 1, 1), BLUR_OK);
  client = start(port, &status);
  ASSERT_EQ(status, BLUR_OK);
  EXPECT_EQ(spent(client), kNat);
}

// A unit above BLUR_MAX_PROG_SIZE or not a power of two: refused before
// anything is written.
TEST(CApi, ProgramUnitBeyondTheConfigurationIsRefused) {
  ram_port_init(&ram, 6, 0xFF, 12);
  const uint32_t bad_units[] = {2 * BLUR_MAX_PROG_SIZE, 3, 24};
  for (const uint32_t unit : bad_units) {
    blur_port port = ram_port_port(&ram);
    port.prog_size = unit;
    blur_client* client = nullptr;
    EXPECT_EQ(blur_open(memory, sizeof memory, &port, &client), BLUR_INVALID_ARGUMENT) << unit;
  }
  EXPECT_EQ(ram.programs, 0u);
}

// The enrollment body: the nonce blur_device_nonce gives and a 64-hex
// device key, the same after a reboot; the token form adds the token.
TEST(CApi, EnrollmentBodyCarriesTheNonceAndAStableDeviceKey) {
  ram_port_init(&ram, 6, 0xFF, 1);
  const blur_port port = ram_port_port(&ram);
  blur_status status;
  blur_client* client = start(port, &status);
  ASSERT_EQ(status, BLUR_OK);
  char body[BLUR_ENROLLMENT_BODY_SIZE];
  ASSERT_EQ(blur_enrollment_body(client, body, sizeof body), BLUR_OK);
  EXPECT_EQ(blur_enrollment_body(client, body, sizeof body - 1), BLUR_BUFFER_TOO_SMALL);
  EXPECT_EQ(strlen(body), static_cast<size_t>(BLUR_ENROLLMENT_BODY_SIZE - 1));
  uint64_t nonce = 0;
  ASSERT_EQ(blur_device_nonce(client, &nonce), BLUR_OK);
  char head[64];
  snprintf(head, sizeof head, "{\"device_nonce\":\"%016llx\",\"device_key\":\"",
           static_cast<unsigned long long>(nonce));
  EXPECT_EQ(strncmp(body, head, strlen(head)), 0) << body;
  EXPECT_EQ(strspn(body + strlen(head), "0123456789abcdef"), 64u) << body;
  EXPECT_EQ(strcmp(body + strlen(head) + 64, "\"}"), 0) << body;

  client = start(port, &status);  // a reboot: the same key
  ASSERT_EQ(status, BLUR_OK);
  char again[BLUR_ENROLLMENT_BODY_SIZE];
  ASSERT_EQ(blur_enrollment_body(client, again, sizeof again), BLUR_OK);
  EXPECT_EQ(strcmp(body, again), 0) << body;

  char with_token[BLUR_ENROLLMENT_BODY_WITH_TOKEN_SIZE];
  ASSERT_EQ(blur_enrollment_body_with_token(client, "bt1-x", with_token, sizeof with_token),
            BLUR_OK);
  EXPECT_EQ(strncmp(with_token, body, strlen(body) - 1), 0);
  EXPECT_EQ(strcmp(with_token + strlen(body) - 1, ",\"device_token\":\"bt1-x\"}"), 0)
      << with_token;
  EXPECT_EQ(blur_enrollment_body_with_token(client, nullptr, with_token, sizeof with_token),
            BLUR_INVALID_ARGUMENT);
  EXPECT_EQ(blur_enrollment_body_with_token(client, "a\"b", with_token, sizeof with_token),
            BLUR_INVALID_ARGUMENT);
}

TEST(CApi, SdkVersionIsTheWireVersion) {
  EXPECT_EQ(blur_sdk_version(), blur::kSdkVersion);
  EXPECT_EQ(blur_sdk_version() >> 16, blur::kSdkVersionMajor);
  EXPECT_EQ(blur_sdk_version() & 0xFF, blur::kSdkVersionPatch);
}

}  // namespace
