// blur::Client: the whole device (DRBG, ledger, queue, metrics) on one port.
#include "blur/client.h"

#include <gtest/gtest.h>

#include "blur/compat/std_facilities.h"

#include "blur.pb.h"
#include "pb_decode.h"
#include "sim_port.h"

namespace {

using blur::MechanismId;
using blur::Status;

constexpr uint32_t kNat = blur::kEpsilonMicrosPerNat;

blur::LedgerPolicy policy() {
  blur::LedgerPolicy p;
  p.lifetime_cap_micros = 100 * uint64_t{kNat};
  return p;
}

// Memoized metrics charge their report epsilon every report, the same for
// every value (nothing depends on how many distinct values were seen); a
// memoized metric id keeps its configuration across reboots; reports queue
// and leave on acknowledgement.
TEST(Client, MemoizedMetricsChargeTheSameForEveryValue) {
  blur::sim::SimPort port(71);
  static blur::Client client;
  new (&client) blur::Client();
  ASSERT_EQ(client.open(port.port()), Status::kNotProvisioned);
  ASSERT_EQ(client.provision(policy()), Status::kOk);
  ASSERT_TRUE(client.ledger().secret() != nullptr);
  ASSERT_EQ(client.add_metric(1, MechanismId::kRappor, kNat, 64, 4 * kNat), Status::kOk);
  ASSERT_EQ(client.add_metric(2, MechanismId::kSymmetricUnaryEncoding, kNat, 16, 2 * kNat),
            Status::kOk);
  ASSERT_EQ(client.add_metric(4, MechanismId::kLoloha, kNat / 2, 16, 2 * kNat), Status::kOk);
  EXPECT_EQ(client.add_metric(3, MechanismId::kOptimizedUnaryEncoding, kNat, 16, 2 * kNat),
            Status::kInvalidArgument);  // asymmetric: not memoizable
  EXPECT_EQ(client.add_metric(5, MechanismId::kLoloha, kNat, 16), Status::kInvalidArgument);
  EXPECT_EQ(client.add_metric(1, MechanismId::kBinaryRandomizedResponse, kNat, 2),
            Status::kInvalidArgument);  // repeated id
  for (int i = 0; i < 3; ++i) ASSERT_EQ(client.record(1, 5), Status::kOk);
  EXPECT_EQ(client.ledger().spent_micros(), 3u * kNat);
  ASSERT_EQ(client.record(1, 6), Status::kOk);  // a new value: the same charge
  ASSERT_EQ(client.record(2, 6), Status::kOk);
  for (uint32_t v = 0; v < 8; ++v) ASSERT_EQ(client.record(4, v), Status::kOk);
  EXPECT_EQ(client.ledger().spent_micros(), 9u * kNat);  // 5 x 1 + 8 x 0.5
  EXPECT_EQ(client.queue().pending_count(), 13u);
  static uint8_t batch[16384];
  size_t written = 0, count = 0;
  uint64_t token = 0;
  ASSERT_EQ(client.pending_batch(batch, sizeof batch, &written, &count, &token), Status::kOk);
  EXPECT_EQ(count, 13u);
  ASSERT_EQ(client.acknowledge(token), Status::kOk);
  EXPECT_EQ(client.queue().pending_count(), 0u);

  static blur::Client rebooted;
  new (&rebooted) blur::Client();
  ASSERT_EQ(rebooted.open(port.port()), Status::kOk);
  // An app update that changes a memoized metric's configuration must use a
  // new id: the old one would draw new permanent responses.
  EXPECT_EQ(rebooted.add_metric(1, MechanismId::kRappor, kNat, 64, 3 * kNat),
            Status::kConfigurationChanged);
  EXPECT_EQ(rebooted.add_metric(1, MechanismId::kSymmetricUnaryEncoding, kNat, 64, 4 * kNat),
            Status::kConfigurationChanged);
  ASSERT_EQ(rebooted.add_metric(1, MechanismId::kRappor, kNat, 64, 4 * kNat), Status::kOk);
  ASSERT_EQ(rebooted.record(1, 5), Status::kOk);
  EXPECT_EQ(rebooted.ledger().spent_micros(), 10u * kNat);
  EXPECT_EQ(rebooted.queue().pending_count(), 1u);
  EXPECT_EQ(rebooted.record(1, 64), Status::kInvalidArgument);  // outside the domain
  EXPECT_EQ(rebooted.record(9, 1), Status::kInvalidArgument);   // unknown metric
  EXPECT_EQ(rebooted.ledger().spent_micros(), 10u * kNat);
}

// Each report carries the port clock's minute when it was recorded (the
// collector buckets by it); without a working clock, no minute at all.
TEST(Client, ReportsCarryTheClockMinute) {
  blur::sim::SimPort port(72);
  port.set_time(1795000000 + 59);
  static blur::Client client;
  new (&client) blur::Client();
  ASSERT_EQ(client.open(port.port()), Status::kNotProvisioned);
  ASSERT_EQ(client.provision(policy()), Status::kOk);
  ASSERT_EQ(client.add_metric(1, MechanismId::kBinaryRandomizedResponse, kNat, 2), Status::kOk);
  ASSERT_EQ(client.record(1, 1), Status::kOk);
  port.fail_clock(true);
  ASSERT_EQ(client.record(1, 0), Status::kOk);
  static uint8_t batch[1024];
  size_t written = 0, count = 0;
  uint64_t token = 0;
  ASSERT_EQ(client.pending_batch(batch, sizeof batch, &written, &count, &token), Status::kOk);
  ASSERT_EQ(count, 2u);
  static blur_ReportBatch decoded;
  decoded = blur_ReportBatch_init_zero;
  pb_istream_t stream = pb_istream_from_buffer(batch, written);
  ASSERT_TRUE(pb_decode(&stream, blur_ReportBatch_fields, &decoded));
  ASSERT_EQ(decoded.reports_count, 2u);
  EXPECT_EQ(decoded.reports[0].has_observed_minute, blur::kObservedTimeBuilt);
  if (blur::kObservedTimeBuilt) {
    EXPECT_EQ(decoded.reports[0].observed_minute, (1795000000u + 59) / 60);
  }
  EXPECT_FALSE(decoded.reports[1].has_observed_minute);
}

}  // namespace
