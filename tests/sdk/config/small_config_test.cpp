// The whole SDK (its sources, the Client and the C API) compiled with
// small_config.h as BLUR_CONFIG_FILE, driven through the C API: each
// capacity of the file takes effect.
#include <gtest/gtest.h>
#include <string.h>

#include "blur/blur.h"
#include "ram_port.h"

namespace {

static_assert(BLUR_LEDGER_MAX_METRICS == 4 && BLUR_MAX_METRICS == 3 && BLUR_MAX_PROG_SIZE == 32,
              "built with small_config.h");
static_assert(sizeof(blur_policy::metric_caps) / sizeof(blur_metric_cap) == 4, "4 caps");

constexpr uint32_t kNat = 1000000;

alignas(16) uint8_t memory[BLUR_CLIENT_MEMORY_SIZE];
ram_port ram;

blur_policy policy_of(uint32_t cap_count) {
  blur_policy policy;
  memset(&policy, 0, sizeof policy);
  policy.lifetime_cap_micros = 100ull * kNat;
  for (uint32_t i = 0; i < cap_count && i < BLUR_LEDGER_MAX_METRICS; ++i) {
    policy.metric_caps[i] = {i + 1, 25ull * kNat};
  }
  policy.metric_cap_count = cap_count;
  return policy;
}

// A provisioned device on a fresh 6-block RAM flash.
blur_client* provisioned(uint64_t seed) {
  ram_port_init(&ram, 6, 0xFF, seed);
  const blur_port port = ram_port_port(&ram);
  blur_client* client = nullptr;
  if (blur_open(memory, sizeof memory, &port, &client) != BLUR_NOT_PROVISIONED) return nullptr;
  const blur_policy policy = policy_of(0);
  return blur_provision(client, &policy) == BLUR_OK ? client : nullptr;
}

TEST(SmallConfig, PolicyTakesFourMetricCapsNotFive) {
  ram_port_init(&ram, 6, 0xFF, 1);
  const blur_port port = ram_port_port(&ram);
  blur_client* client = nullptr;
  ASSERT_EQ(blur_open(memory, sizeof memory, &port, &client), BLUR_NOT_PROVISIONED);
  const blur_policy five = policy_of(5);
  EXPECT_EQ(blur_provision(client, &five), BLUR_INVALID_ARGUMENT);
  const blur_policy four = policy_of(4);
  ASSERT_EQ(blur_provision(client, &four), BLUR_OK);

  // The caps hold across a reboot, in the 4-cap record.
  const blur_metric metric = {4, BLUR_MECHANISM_RR, 10 * kNat, 2, 0, 0};
  client = nullptr;
  ASSERT_EQ(blur_open(memory, sizeof memory, &port, &client), BLUR_OK);
  ASSERT_EQ(blur_add_metric(client, &metric), BLUR_OK);
  EXPECT_EQ(blur_record(client, 4, 1), BLUR_OK);
  EXPECT_EQ(blur_record(client, 4, 1), BLUR_OK);
  EXPECT_EQ(blur_record(client, 4, 1), BLUR_METRIC_BUDGET_EXHAUSTED);  // 30 > 25
  blur_budget budget;
  ASSERT_EQ(blur_get_budget(client, &budget), BLUR_OK);
  EXPECT_EQ(budget.spent_micros, 20ull * kNat);
}

TEST(SmallConfig, ClientTakesThreeMetrics) {
  blur_client* client = provisioned(2);
  ASSERT_NE(client, nullptr);
  for (uint32_t id = 1; id <= 3; ++id) {
    const blur_metric metric = {id, BLUR_MECHANISM_RR, kNat, 2, 0, 0};
    EXPECT_EQ(blur_add_metric(client, &metric), BLUR_OK) << id;
  }
  const blur_metric fourth = {4, BLUR_MECHANISM_RR, kNat, 2, 0, 0};
  EXPECT_EQ(blur_add_metric(client, &fourth), BLUR_INVALID_ARGUMENT);
}

// The memo table pins memoized metrics, not values: any number of distinct
// values reports (a refusal would depend on the values).
TEST(SmallConfig, MemoizedValuesNeverFillTheTable) {
  blur_client* client = provisioned(3);
  ASSERT_NE(client, nullptr);
  const blur_metric sue = {1, BLUR_MECHANISM_SUE, kNat, 8, 2 * kNat, 0};
  ASSERT_EQ(blur_add_metric(client, &sue), BLUR_OK);
  for (uint32_t value = 0; value < 8; ++value) EXPECT_EQ(blur_record(client, 1, value), BLUR_OK);
}

TEST(SmallConfig, BitVectorsHoldThirtyTwoBytes) {
  blur_client* client = provisioned(4);
  ASSERT_NE(client, nullptr);
  const blur_metric too_wide = {1, BLUR_MECHANISM_OUE, kNat, 257, 0, 0};
  EXPECT_EQ(blur_add_metric(client, &too_wide), BLUR_INVALID_ARGUMENT);
  const blur_metric widest = {2, BLUR_MECHANISM_OUE, kNat, 256, 0, 0};
  ASSERT_EQ(blur_add_metric(client, &widest), BLUR_OK);
  EXPECT_EQ(blur_record(client, 2, 255), BLUR_OK);
}

TEST(SmallConfig, OnlyTheConfiguredMechanismsAreBuilt) {
  blur_client* client = provisioned(5);
  ASSERT_NE(client, nullptr);
  const blur_metric laplace = {1, BLUR_MECHANISM_LAPLACE, kNat, 101, 0, 0};
  EXPECT_EQ(blur_add_metric(client, &laplace), BLUR_NOT_BUILT);
  const blur_metric grr = {2, BLUR_MECHANISM_GRR, kNat, 16, 0, 0};
  EXPECT_EQ(blur_add_metric(client, &grr), BLUR_OK);
}

// The default layout gives the ledger three blocks: the queue, which needs
// three, no longer fits five blocks, and starts at block 3.
TEST(SmallConfig, LedgerTakesThreeBlocks) {
  ram_port_init(&ram, 5, 0xFF, 6);
  blur_port port = ram_port_port(&ram);
  blur_client* client = nullptr;
  EXPECT_EQ(blur_open(memory, sizeof memory, &port, &client), BLUR_INVALID_ARGUMENT);

  ram_port_init(&ram, 6, 0xFF, 6);
  port = ram_port_port(&ram);
  ASSERT_EQ(blur_open(memory, sizeof memory, &port, &client), BLUR_NOT_PROVISIONED);
  const blur_policy policy = policy_of(0);
  ASSERT_EQ(blur_provision(client, &policy), BLUR_OK);
  const blur_metric rr = {1, BLUR_MECHANISM_RR, kNat, 2, 0, 0};
  ASSERT_EQ(blur_add_metric(client, &rr), BLUR_OK);
  ASSERT_EQ(blur_record(client, 1, 1), BLUR_OK);

  const blur_partition ledger = {0, 3};
  const blur_partition queue = {3, 3};
  client = nullptr;
  ASSERT_EQ(blur_open_partitioned(memory, sizeof memory, &port, &ledger, &queue, &client), BLUR_OK);
  blur_budget budget;
  ASSERT_EQ(blur_get_budget(client, &budget), BLUR_OK);
  EXPECT_EQ(budget.spent_micros, uint64_t{kNat});
  EXPECT_EQ(budget.pending_reports, 1u);
}

// A port whose unit exceeds this build's BLUR_MAX_PROG_SIZE (32) is refused.
TEST(SmallConfig, ProgramUnitAboveThirtyTwoIsRefused) {
  ram_port_init(&ram, 6, 0xFF, 7);
  blur_port port = ram_port_port(&ram);
  blur_client* client = nullptr;
  port.prog_size = 64;
  EXPECT_EQ(blur_open(memory, sizeof memory, &port, &client), BLUR_INVALID_ARGUMENT);
  port.prog_size = 32;
  EXPECT_EQ(blur_open(memory, sizeof memory, &port, &client), BLUR_NOT_PROVISIONED);
}

}  // namespace
