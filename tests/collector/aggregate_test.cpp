#include "aggregate/aggregate.h"

#include <gtest/gtest.h>

#include <random>

#include "aggregate/payload.h"
#include "blur/mechanisms/hadamard_response.h"
#include "random_reports.h"

namespace {

using namespace blur::collector;

// A pem metric: its tally (9 levels x 2^14 seeds x 64 buckets at epsilon 4)
// is far longer than kSparseTallyCells, so it is kept sparse.
MetricConfig sparse_pem_metric(uint32_t id, uint32_t domain_size) {
  MetricConfig metric;
  metric.id = id;
  metric.mechanism = MechanismId::kPrefixExtension;
  metric.epsilon_micros = 4000000;
  metric.domain_size = domain_size;
  return metric;
}

// The truncated lengths the refusal sweeps below try: every one in the
// host build; under ASan (a Debug build, where these sweeps, quadratic in
// the bytes of the larger tallies, took most of the test's time) every
// length of the first 64 bytes, then every 5th.
size_t next_cut(size_t cut) {
#if defined(__SANITIZE_ADDRESS__)
  if (cut >= 64) return cut + 5;
#endif
  return cut + 1;
}

IncomingReport scalar(const MetricConfig& metric, uint32_t value) {
  IncomingReport r;
  r.metric_id = metric.id;
  r.has_payload = true;
  r.payload = blur::mechanism_payload(metric.mechanism);
  r.value = value;
  return r;
}

// The Walsh-Hadamard shortcut counts exactly what the definition says:
// report j supports v iff popcount((v + 1) & j) is even.
TEST(Aggregate, HadamardSupportEqualsTheDefinition) {
  const MetricConfig metric{1, MechanismId::kHadamardResponse, 1000000, 13};
  const uint32_t size = blur::hadamard_size(13);
  Aggregate aggregate(metric);
  std::vector<uint64_t> expected(13, 0);
  std::mt19937 rng(5);
  for (int i = 0; i < 5000; ++i) {
    const uint32_t j = rng() % size;
    const uint64_t multiplicity = 1 + rng() % 3;
    aggregate.add(scalar(metric, j), multiplicity);
    for (uint32_t v = 0; v < 13; ++v) {
      if ((__builtin_popcount((v + 1) & j) & 1) == 0) expected[v] += multiplicity;
    }
  }
  EXPECT_EQ(aggregate.support_counts(), expected);
}

// Local hashing: tallying by (a, bucket xor top(b)), and the support from
// the Walsh-Hadamard transform of the tally, count exactly what the
// definition says: (a, b, y) supports v iff top(a v + b) = y. The largest
// domain exercises every basis bit; epsilon 0.5, 4 and 8 give g = 2, 16
// and 256 (the most bucket bits).
TEST(Aggregate, LocalHashSupportEqualsTheDefinition) {
  for (auto mechanism : {MechanismId::kOptimizedLocalHashing, MechanismId::kBinaryLocalHashing}) {
    for (uint32_t domain : {2u, 100u, 4096u}) {
      for (uint32_t epsilon_micros : {500000u, 4000000u, 8000000u}) {
        const MetricConfig metric{1, mechanism, epsilon_micros, domain};
        const auto shape = local_hash_shape(metric);
        const uint32_t shift = shape.field_bits - shape.bucket_bits;
        Aggregate aggregate(metric);
        std::vector<uint64_t> expected(domain, 0);
        std::mt19937 rng(6);
        for (int i = 0; i < 300; ++i) {
          IncomingReport r = scalar(metric, rng() % (1u << shape.bucket_bits));
          r.hash_a = rng() % (1u << shape.field_bits);
          r.hash_b = rng() % (1u << shape.field_bits);
          aggregate.add(r);
          for (uint32_t v = 0; v < domain; ++v) {
            expected[v] += ((blur::gf2_multiply(r.hash_a, v, shape.field_bits) ^ r.hash_b) >>
                            shift) == r.value;
          }
        }
        EXPECT_EQ(aggregate.support_counts(), expected)
            << blur::mechanism_name(mechanism) << " d " << domain << " eps_micros "
            << epsilon_micros;
      }
    }
  }
}

TEST(Aggregate, UnaryBitsAndScalarValues) {
  const MetricConfig oue{2, MechanismId::kOptimizedUnaryEncoding, 1000000, 12};
  Aggregate unary(oue);
  IncomingReport r = scalar(oue, 0);
  r.bits = std::string("\x81\x08", 2);  // values 0, 7, 11
  unary.add(r, 2);
  EXPECT_EQ(unary.support_counts(), (std::vector<uint64_t>{2, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 2}));
  EXPECT_EQ(unary.reports(), 2u);
  const MetricConfig grr_metric{3, MechanismId::kGeneralizedRandomizedResponse, 1000000, 4};
  Aggregate grr(grr_metric);
  grr.add(scalar(grr_metric, 2));
  grr.add(scalar(grr_metric, 2), 4);
  EXPECT_EQ(grr.support_counts(), (std::vector<uint64_t>{0, 0, 5, 0}));
}

// For every mechanism: merge(A, B) is the aggregate of A's and B's reports
// together, serialize/deserialize is the identity, and the flat payload
// round-trips (the store relies on all three).
TEST(Aggregate, MergeSerializeAndPayloadRoundTripForEveryMechanism) {
  std::mt19937_64 rng(11);
  for (const MetricConfig& metric : blur_test::one_metric_per_mechanism()) {
    SCOPED_TRACE(describe(metric));
    Aggregate a(metric), b(metric), all(metric);
    for (int i = 0; i < 500; ++i) {
      const IncomingReport r = blur_test::random_report(metric, rng);
      IncomingReport back;
      ASSERT_TRUE(unflatten_payload(metric, flatten_payload(r), &back));
      EXPECT_EQ(flatten_payload(back), flatten_payload(r));
      (i % 3 == 0 ? a : b).add(back);
      all.add(r);
    }
    a.merge(b);
    EXPECT_EQ(a.reports(), all.reports());
    EXPECT_EQ(a.tally(), all.tally());
    EXPECT_EQ(a.summary().histogram(), all.summary().histogram());
    EXPECT_EQ(a.support_counts(), all.support_counts());
    auto restored = Aggregate::deserialize(metric, all.serialize());
    ASSERT_TRUE(restored) << restored.error().message;
    EXPECT_EQ(restored->serialize(), all.serialize());
    EXPECT_EQ(restored->support_counts(), all.support_counts());
    EXPECT_EQ(restored->summary().mean(), all.summary().mean());
    // An empty aggregate round-trips too.
    auto empty = Aggregate::deserialize(metric, Aggregate(metric).serialize());
    ASSERT_TRUE(empty);
    EXPECT_EQ(empty->reports(), 0u);
  }
}

// Stored bytes are untrusted: anything but an exact aggregate of the
// metric's shape is refused with a message, never read past its end.
TEST(Aggregate, CorruptBytesAreRefused) {
  std::mt19937_64 rng(12);
  for (const MetricConfig& metric : blur_test::one_metric_per_mechanism()) {
    SCOPED_TRACE(describe(metric));
    Aggregate aggregate(metric);
    for (int i = 0; i < 50; ++i) aggregate.add(blur_test::random_report(metric, rng));
    const std::string bytes = aggregate.serialize();
    // Adding refused bytes to an aggregate leaves it as it was, even when
    // the bytes go bad only after most of the tally was read.
    Aggregate target(metric);
    for (int i = 0; i < 20; ++i) target.add(blur_test::random_report(metric, rng));
    const std::string before = target.serialize();
    for (size_t cut = 0; cut < bytes.size(); cut = next_cut(cut)) {
      EXPECT_FALSE(Aggregate::deserialize(metric, bytes.substr(0, cut))) << "cut at " << cut;
      EXPECT_FALSE(target.add_serialized(bytes.substr(0, cut)));
      ASSERT_EQ(target.serialize(), before) << "changed by a refused cut at " << cut;
    }
    EXPECT_FALSE(Aggregate::deserialize(metric, bytes + '\0'));
    EXPECT_FALSE(target.add_serialized(bytes + '\0'));
    EXPECT_EQ(target.serialize(), before);
    ASSERT_TRUE(target.add_serialized(bytes));
    EXPECT_EQ(target.reports(), 70u);
    std::string other = bytes;
    other[1] = static_cast<char>(other[1] ^ 0x40);  // another mechanism id
    EXPECT_FALSE(Aggregate::deserialize(metric, other));
    other = bytes;
    other[0] = 9;  // a future format
    auto refused = Aggregate::deserialize(metric, other);
    ASSERT_FALSE(refused);
    EXPECT_NE(refused.error().message.find("format version"), std::string::npos);
  }
}

// A pem tally (9 levels x 2^14 seeds x 64 buckets at epsilon 4) is kept
// sparse: the same tally, support and bytes as counting densely, merged and
// round-tripped, and refused bytes change nothing.
TEST(Aggregate, SparseTallyMatchesTheDenseCount) {
  const MetricConfig metric = sparse_pem_metric(3, 10);
  std::mt19937_64 rng(13);
  Aggregate a(metric), b(metric);
  std::vector<uint64_t> dense(9u * 16384u * 64u, 0);
  ASSERT_GT(dense.size(), Aggregate::kSparseTallyCells);
  for (int i = 0; i < 3000; ++i) {
    const IncomingReport r = blur_test::random_report(metric, rng);
    const uint64_t multiplicity = 1 + rng() % 2;
    (i % 2 == 0 ? a : b).add(r, multiplicity);
    dense[((size_t{r.hash_a} * 16384 + r.hash_b) << 6) | r.value] += multiplicity;
  }
  a.merge(b);
  EXPECT_EQ(a.tally(), dense);
  const std::string bytes = a.serialize();
  EXPECT_LT(bytes.size(), 30000u);  // about the nonzero cells, not 9.4M counts
  auto restored = Aggregate::deserialize(metric, bytes);
  ASSERT_TRUE(restored) << restored.error().message;
  EXPECT_EQ(restored->tally(), dense);
  EXPECT_EQ(restored->serialize(), bytes);
  EXPECT_EQ(restored->reports(), a.reports());

  Aggregate target(metric);
  target.add(blur_test::random_report(metric, rng));
  const std::string before = target.serialize();
  for (size_t cut = 0; cut < bytes.size(); cut += 7) {
    EXPECT_FALSE(target.add_serialized(bytes.substr(0, cut))) << "cut at " << cut;
    ASSERT_EQ(target.serialize(), before) << "changed by a refused cut at " << cut;
  }
  EXPECT_FALSE(target.add_serialized(bytes + '\0'));
  EXPECT_EQ(target.serialize(), before);
}

// What a commit writes back to a stored row: serialize_added_to(stored) is
// serialize() of the merged aggregate, byte for byte, for every mechanism
// and for pem's sparse tally (whose stored cells are read in one pass, not
// built into a table); cells only in the row, only in the delta, in both,
// and at the tally's ends. Refused stored bytes give an error.
TEST(Aggregate, SerializeAddedToEqualsTheMergedAggregate) {
  std::mt19937_64 rng(14);
  std::vector<MetricConfig> metrics = blur_test::one_metric_per_mechanism();
  const MetricConfig sparse = sparse_pem_metric(3, 10);
  metrics.push_back(sparse);
  for (const MetricConfig& metric : metrics) {
    SCOPED_TRACE(describe(metric));
    for (const auto& [stored_reports, delta_reports] :
         std::vector<std::pair<int, int>>{{0, 0}, {0, 5}, {5, 0}, {300, 7}, {7, 300}, {400, 400}}) {
      Aggregate stored(metric), delta(metric);
      for (int i = 0; i < stored_reports; ++i) stored.add(blur_test::random_report(metric, rng));
      for (int i = 0; i < delta_reports; ++i) delta.add(blur_test::random_report(metric, rng));
      // Some cells in both: the delta repeats a few of the stored reports.
      if (stored_reports > 0 && delta_reports > 0) delta.merge(stored);
      Aggregate merged = stored;
      merged.merge(delta);
      auto sum = delta.serialize_added_to(stored.serialize());
      ASSERT_TRUE(sum) << sum.error().message;
      EXPECT_EQ(sum->bytes, merged.serialize());
      EXPECT_EQ(sum->reports, merged.reports());
    }
    Aggregate stored(metric), delta(metric);
    for (int i = 0; i < 40; ++i) stored.add(blur_test::random_report(metric, rng));
    for (int i = 0; i < 3; ++i) delta.add(blur_test::random_report(metric, rng));
    const std::string bytes = stored.serialize();
    for (size_t cut = 0; cut < bytes.size(); cut = next_cut(cut)) {
      EXPECT_FALSE(delta.serialize_added_to(bytes.substr(0, cut))) << "cut at " << cut;
    }
    EXPECT_FALSE(delta.serialize_added_to(bytes + '\0'));
    std::string other = bytes;
    other[1] = static_cast<char>(other[1] ^ 0x40);
    EXPECT_FALSE(delta.serialize_added_to(other));
  }
  // The sparse tally's cells at both ends: cell 0 and the last cell.
  Aggregate first(sparse), last(sparse);
  IncomingReport r = blur_test::random_report(sparse, rng);
  r.hash_a = 0, r.hash_b = 0, r.value = 0;
  first.add(r);
  r.hash_a = 8, r.hash_b = 16383, r.value = 63;
  last.add(r);
  Aggregate both = first;
  both.merge(last);
  for (const auto& [delta, stored] : {std::pair(&first, &last), std::pair(&last, &first)}) {
    auto sum = delta->serialize_added_to(stored->serialize());
    ASSERT_TRUE(sum) << sum.error().message;
    EXPECT_EQ(sum->bytes, both.serialize());
  }
  // A count that would overflow is refused, not wrapped.
  Aggregate huge(sparse);
  huge.add(r, ~uint64_t{0});
  EXPECT_FALSE(last.serialize_added_to(huge.serialize()));
}

// The fingerprint (the discovery cache's key): equal for the same counts
// however they were added (sparse pem, dense rr, numeric), different once
// one more report is added, to any bucket.
TEST(Aggregate, FingerprintFollowsTheContent) {
  std::vector<MetricConfig> metrics = blur_test::one_metric_per_mechanism();
  metrics.push_back(sparse_pem_metric(90, 16));
  for (const MetricConfig& metric : metrics) {
    std::mt19937_64 rng(metric.id);
    std::vector<IncomingReport> reports;
    for (int i = 0; i < 200; ++i) reports.push_back(blur_test::random_report(metric, rng));
    Aggregate forward(metric), backward(metric), split(metric), other(metric);
    for (const IncomingReport& r : reports) forward.add(r);
    for (auto r = reports.rbegin(); r != reports.rend(); ++r) backward.add(*r);
    for (size_t i = 0; i < reports.size(); ++i) (i % 3 == 0 ? split : other).add(reports[i]);
    split.merge(other);
    EXPECT_EQ(forward.fingerprint(), backward.fingerprint()) << describe(metric);
    EXPECT_EQ(forward.fingerprint(), split.fingerprint()) << describe(metric);
    auto restored = Aggregate::deserialize(metric, forward.serialize());
    ASSERT_TRUE(restored);
    EXPECT_EQ(restored->fingerprint(), forward.fingerprint()) << describe(metric);
    Aggregate more = forward;
    more.add(reports[0]);
    EXPECT_NE(more.fingerprint(), forward.fingerprint()) << describe(metric);
    EXPECT_NE(Aggregate(metric).fingerprint(), forward.fingerprint()) << describe(metric);
  }
}

}  // namespace
