#include "ingest/batch_validator.h"

#include <gtest/gtest.h>

#include <vector>

#include "incoming_reports.h"

namespace {

using namespace blur::collector;

std::optional<MetricConfig> lookup(uint32_t id) {
  if (id != 1) return std::nullopt;
  return MetricConfig{1, MechanismId::kBinaryRandomizedResponse, 1000000, 2};
}

Batch valid_batch() {
  Batch batch;
  batch.sdk_version = 256;
  batch.device_nonce = 9;
  for (uint64_t id = 0; id < 3; ++id)
    batch.reports.push_back(blur_test::binary_report(id, id % 2 == 1));
  return batch;
}

TEST(BatchValidator, AcceptsConsistentBatches) {
  EXPECT_EQ(validate_batch(valid_batch(), lookup), "");
}

TEST(BatchValidator, NamesTheFirstInconsistency) {
  struct Case {
    void (*mutate)(Batch&);
    const char* expected;
  } cases[] = {
      {[](Batch& b) { b.reports.clear(); }, "no reports"},
      {[](Batch& b) { b.reports[1].metric_id = 7; }, "report 1 (id 1): unknown metric 7"},
      {[](Batch& b) { b.reports[2].mechanism = 2; }, "report 2 (id 2): mechanism 2"},
      {[](Batch& b) { b.reports[0].epsilon_micros = 999999; }, "epsilon_micros 999999"},
      {[](Batch& b) { b.reports[0].domain_size = 3; }, "domain_size 3"},
      {[](Batch& b) { b.reports[0].payload = PayloadKind::kIndex; },
       "payload must be `bit` for rr"},
      {[](Batch& b) { b.reports[0].has_payload = false; }, "payload must be `bit`"},
      {[](Batch& b) { b.reports[1].value = 2; }, "report 1 (id 1): index 2 is outside the domain"},
      {[](Batch& b) { b.reports[2].report_id = 0; }, "report id repeats"},
  };
  for (const Case& c : cases) {
    Batch batch = valid_batch();
    c.mutate(batch);
    bool unknown_metric = true;
    const std::string error = validate_batch(batch, lookup, &unknown_metric);
    EXPECT_NE(error.find(c.expected), std::string::npos) << "got: " << error;
    // Only the unknown metric is told apart (it is counted apart).
    EXPECT_EQ(unknown_metric, error.find("unknown metric") != std::string::npos) << error;
  }
  bool unknown_metric = true;
  EXPECT_EQ(validate_batch(valid_batch(), lookup, &unknown_metric), "");
  EXPECT_FALSE(unknown_metric);
}

TEST(BatchValidator, BitVectorsMustFitTheDomainExactly) {
  const auto oue = [](uint32_t id) -> std::optional<MetricConfig> {
    if (id != 4) return std::nullopt;
    return MetricConfig{4, MechanismId::kOptimizedUnaryEncoding, 1000000, 12};
  };
  Batch batch;
  IncomingReport r;
  r.metric_id = 4;
  r.mechanism = 4;
  r.epsilon_micros = 1000000;
  r.domain_size = 12;
  r.payload = PayloadKind::kBits;
  r.has_payload = true;
  r.bits = std::string("\xff\x0f", 2);  // all 12 bits set, padding clear
  batch.reports.push_back(r);
  EXPECT_EQ(validate_batch(batch, oue), "");
  batch.reports[0].bits = std::string("\xff\x1f", 2);  // bit 12 set: past the domain
  EXPECT_NE(validate_batch(batch, oue).find("bits set past the domain"), std::string::npos);
  batch.reports[0].bits = std::string("\xff", 1);
  EXPECT_NE(validate_batch(batch, oue).find("bit vector of 1 bytes, expected 2"),
            std::string::npos);
  batch.reports[0].payload = PayloadKind::kIndex;
  EXPECT_NE(validate_batch(batch, oue).find("payload must be `bits` for oue"), std::string::npos);
}

TEST(BatchValidator, BloomFiltersMatchTheMetricShape) {
  const auto rappor = [](uint32_t id) -> std::optional<MetricConfig> {
    if (id != 10) return std::nullopt;
    MetricConfig metric{10, MechanismId::kRappor, 2000000, 100};
    metric.rappor = blur::RapporShape{64, 2, 8};
    return metric;
  };
  Batch batch;
  IncomingReport r;
  r.metric_id = 10;
  r.mechanism = 10;
  r.epsilon_micros = 2000000;
  r.domain_size = 100;
  r.payload = PayloadKind::kBloom;
  r.has_payload = true;
  r.value = 7;  // the last cohort
  r.bits = std::string(8, '\xff');
  batch.reports.push_back(r);
  EXPECT_EQ(validate_batch(batch, rappor), "");
  batch.reports[0].value = 8;
  EXPECT_NE(validate_batch(batch, rappor).find("cohort 8 is outside the 8 cohorts"),
            std::string::npos);
  batch.reports[0].value = 0;
  batch.reports[0].bits = std::string(32, '\0');
  EXPECT_NE(validate_batch(batch, rappor).find("Bloom filter of 32 bytes, expected 8"),
            std::string::npos);
  batch.reports[0].payload = PayloadKind::kBits;
  EXPECT_NE(validate_batch(batch, rappor).find("payload must be `bloom` for rappor"),
            std::string::npos);
}

// sfp: position < ceil(L / 2) and fragment seed < 2^10 in a, word seed <
// 2^14 in b, each half's bucket below 2^g (g = 3 at epsilon 4); the tally
// indexes cells by all five, so one out of range would write outside it.
TEST(BatchValidator, FragmentPuzzleReportsStayInsideTheFamily) {
  const auto sfp = [](uint32_t id) -> std::optional<MetricConfig> {
    if (id != 12) return std::nullopt;
    return MetricConfig{12, MechanismId::kSequenceFragmentPuzzle, 4000000, 9};
  };
  Batch batch;
  IncomingReport r;
  r.metric_id = 12;
  r.mechanism = 12;
  r.epsilon_micros = 4000000;
  r.domain_size = 9;
  r.payload = PayloadKind::kLocalHash;
  r.has_payload = true;
  r.hash_a = 4u << 10 | 1023;  // the last position (9 characters: 5) and seed
  r.hash_b = 16383;
  r.value = 7u << 8 | 7;
  batch.reports.push_back(r);
  EXPECT_EQ(validate_batch(batch, sfp), "");
  const std::string outside = "fragment position, hash seed or bucket outside the family";
  for (const auto& mutate : std::vector<void (*)(IncomingReport&)>{
           [](IncomingReport& x) { x.hash_a = 5u << 10; },
           [](IncomingReport& x) { x.hash_b = 16384; },
           [](IncomingReport& x) { x.value = 8u << 8; },
           [](IncomingReport& x) { x.value = 8; },
           [](IncomingReport& x) { x.value = 1u << 16; }}) {
    Batch bad = batch;
    mutate(bad.reports[0]);
    EXPECT_NE(validate_batch(bad, sfp).find(outside), std::string::npos);
  }
}

}  // namespace
