// Word discovery on the device: the word packing, the GF(2^64) prefix hash
// and the prefix-extension mechanism (sdk/include/blur/discovery/).
#include "blur/discovery/prefix_extension.h"

#include <gtest/gtest.h>
#include <math.h>
#include <string.h>

#include "blur/client.h"
#include "blur/sampling/rng.h"
#include "sim_port.h"
#include "stats.h"

namespace {

using blur::PrefixExtension;
using blur::Status;
using blur::Word;

Word word(const char* text) {
  const auto parsed = Word::parse(text, strlen(text));
  EXPECT_TRUE(parsed.ok()) << text;
  return parsed.ok() ? parsed.value() : Word{};
}

TEST(Word, PacksFiveBitsPerCharacterAndRefusesOthers) {
  const Word w = word("zap's");
  EXPECT_EQ(w.length, 5u);
  EXPECT_EQ(w.low, 26u | 1u << 5 | 16u << 10 | 27u << 15 | 19u << 20);
  EXPECT_EQ(w.high, 0u);
  const Word long_word = word("abcdefghijklmnop");  // 16: characters 12..15 in `high`
  EXPECT_EQ(long_word.code(12), 13u);
  EXPECT_EQ(long_word.high, 13u | 14u << 5 | 15u << 10 | 16u << 15);
  for (uint32_t i = 0; i < 16; ++i) EXPECT_EQ(long_word.code(i), i + 1);
  EXPECT_EQ(long_word.code(12), 13u);
  for (const char* bad : {"", "Cat", "caf\xc3\xa9", "a b", "x1", "abcdefghijklmnopq"}) {
    EXPECT_EQ(Word::parse(bad, strlen(bad)).status(), Status::kInvalidArgument) << bad;
  }
  EXPECT_EQ(Word::parse(nullptr, 3).status(), Status::kInvalidArgument);
}

TEST(Word, APrefixIsTheWordWithItsLaterCharactersCleared) {
  const Word w = word("abcdefghijklmnop");
  const Word p3 = w.prefix(3), p13 = w.prefix(13);
  EXPECT_EQ(p3.length, 3u);
  EXPECT_EQ(p3.low, word("abc").low);
  EXPECT_EQ(p3.high, 0u);
  EXPECT_EQ(p13.low, w.low);
  EXPECT_EQ(p13.high, 13u);
  const Word short_word = word("ab");
  EXPECT_EQ(short_word.prefix(5).low, short_word.low);  // padded with end codes (0)
  EXPECT_EQ(short_word.prefix(5).length, 2u);
}

// The field: x^64 reduces to x^4 + x^3 + x + 1; multiplication commutes
// and distributes over xor (what the collector's per-character tables need).
TEST(PrefixHash, FieldAndLinearity) {
  EXPECT_EQ(blur::gf64_multiply(uint64_t{1} << 63, 2), 0x1Bu);
  EXPECT_EQ(blur::gf64_times_x(uint64_t{1} << 63), 0x1Bu);
  blur::sim::SimPort port(5);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  for (int i = 0; i < 200; ++i) {
    uint64_t a = 0, b = 0, c = 0;
    ASSERT_EQ(rng.next_u64(&a), Status::kOk);
    ASSERT_EQ(rng.next_u64(&b), Status::kOk);
    ASSERT_EQ(rng.next_u64(&c), Status::kOk);
    EXPECT_EQ(blur::gf64_multiply(a, b), blur::gf64_multiply(b, a));
    EXPECT_EQ(blur::gf64_multiply(a, b ^ c), blur::gf64_multiply(a, b) ^ blur::gf64_multiply(a, c));
    EXPECT_EQ(blur::gf64_multiply(a, 1), a);
  }
  // h(w xor w') = h(w) xor h(w'): "ab" = "a" xor "\0b".
  const Word a = word("a"), ab = word("ab");
  const Word b_only{ab.low ^ a.low, 0, 2};
  for (uint32_t seed = 0; seed < 64; ++seed) {
    const auto key = blur::prefix_hash_key(3, seed);
    EXPECT_EQ(blur::prefix_hash(key, ab, 6),
              blur::prefix_hash(key, a, 6) ^ blur::prefix_hash(key, b_only, 6));
  }
}

// Over one level's fixed table, two words share a bucket on 1/g of the
// seeds, within the binomial spread of a random table (false alarm 1e-6
// per pair; a family with structure, e.g. top bits of a * low alone for
// words that differ only in `high`, would collide on every seed).
TEST(PrefixHash, TableCollisionsAreOneInG) {
  const char* words[] = {"the", "then", "them", "abcdefghijklm", "abcdefghijkln", "a", "b"};
  const uint32_t bits = 6;
  for (uint32_t level : {0u, 7u}) {
    for (const char* x : words) {
      for (const char* y : words) {
        if (strcmp(x, y) >= 0) continue;
        uint64_t same = 0;
        for (uint32_t s = 0; s < blur::kPrefixHashSeeds; ++s) {
          const auto key = blur::prefix_hash_key(level, s);
          same += blur::prefix_hash(key, word(x), bits) == blur::prefix_hash(key, word(y), bits);
        }
        EXPECT_LT(fabs(blur_test::binomial_z(same, blur::kPrefixHashSeeds, 1.0 / 64)),
                  blur_test::kZ1e6)
            << x << " " << y << " level " << level;
      }
    }
  }
}

TEST(PrefixExtension, ShapeAndBuilder) {
  EXPECT_EQ(PrefixExtension::levels(10), 9u);
  EXPECT_EQ(PrefixExtension::levels(2), 1u);
  EXPECT_EQ(PrefixExtension::prefix_length(0), 2u);
  EXPECT_EQ(PrefixExtension::bucket_bits(4000000), 6u);  // e^4 + 1 = 55.6 -> 64
  EXPECT_EQ(PrefixExtension::bucket_bits(8000000), 6u);  // capped
  EXPECT_EQ(PrefixExtension::bucket_bits(1000000), 2u);
  EXPECT_EQ(PrefixExtension::create(4000000, 17).status(), Status::kInvalidArgument);
  EXPECT_EQ(PrefixExtension::create(4000000, 1).status(), Status::kInvalidArgument);
  EXPECT_EQ(PrefixExtension::create(0, 10).status(), Status::kInvalidArgument);
  const auto pem = PrefixExtension::create(4000000, 4);
  ASSERT_TRUE(pem.ok());
  EXPECT_EQ(pem.value().epsilon_charged(), 4000000u);
  blur::sim::SimPort port(1);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  uint32_t seed = 0, bucket = 0;
  EXPECT_EQ(pem.value().randomize(rng, word("hello"), &seed, &bucket), Status::kInvalidArgument);
}

// What the collector assumes, measured on the real sampler: the last level
// is drawn half of the time and each other level 1/(2 (levels - 1)); the
// seed is uniform; the bucket is the prefix's with probability p = e^eps /
// (e^eps + g - 1) and another prefix's with 1/g. Binomial z-scores, false
// alarm 1e-6 each; p off by 0.02 (0.05 in the Cortex-M4 run's smaller
// sample) or a uniform level draw is rejected.
TEST(PrefixExtension, LevelsSeedsAndSupportProbabilities) {
#ifdef BLUR_TEST_SMALL_SCENARIOS
  const uint64_t n = 12000;
#else
  const uint64_t n = 60000;
#endif
  blur::sim::SimPort port(77);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), Status::kOk);
  const auto pem = PrefixExtension::create(2000000, 6);  // 5 levels, g = 8
  ASSERT_TRUE(pem.ok());
  const uint32_t levels = pem.value().levels(), bits = pem.value().bucket_bits();
  ASSERT_EQ(levels, 5u);
  ASSERT_EQ(bits, 3u);
  const double g = 8, e2 = exp(2.0), p = e2 / (e2 + g - 1);
  const Word truth = word("hello"), other = word("help");
  uint64_t at_level[5] = {}, own = 0, others = 0, low_seeds = 0;
  for (uint64_t i = 0; i < n; ++i) {
    uint32_t seed = 0, bucket = 0;
    ASSERT_EQ(pem.value().randomize(rng, truth, &seed, &bucket), Status::kOk);
    const uint32_t level = seed >> 16, s = seed & 0xFFFF;
    ASSERT_LT(level, levels);
    ASSERT_LT(s, blur::kPrefixHashSeeds);
    ASSERT_LT(bucket, 8u);
    ++at_level[level];
    low_seeds += s < blur::kPrefixHashSeeds / 2;
    const uint32_t length = PrefixExtension::prefix_length(level);
    const auto key = blur::prefix_hash_key(level, s);
    own += blur::prefix_hash(key, truth.prefix(length), bits) == bucket;
    // "help" and "hello" share prefixes up to 3 characters: compare at 4+.
    if (length >= 4) others += blur::prefix_hash(key, other.prefix(length), bits) == bucket;
  }
  for (uint32_t level = 0; level + 1 < levels; ++level) {
    EXPECT_LT(fabs(blur_test::binomial_z(at_level[level], n, 1.0 / 8)), blur_test::kZ1e6);
  }
  EXPECT_LT(fabs(blur_test::binomial_z(at_level[4], n, 0.5)), blur_test::kZ1e6);
  EXPECT_GT(fabs(blur_test::binomial_z(at_level[4], n, 0.2)), blur_test::kZ1e6);
  EXPECT_LT(fabs(blur_test::binomial_z(low_seeds, n, 0.5)), blur_test::kZ1e6);
  EXPECT_LT(fabs(blur_test::binomial_z(own, n, p)), blur_test::kZ1e6);
#ifdef BLUR_TEST_SMALL_SCENARIOS
  EXPECT_GT(fabs(blur_test::binomial_z(own, n, p + 0.05)), blur_test::kZ1e6);
#else
  EXPECT_GT(fabs(blur_test::binomial_z(own, n, p + 0.02)), blur_test::kZ1e6);
#endif
  const uint64_t compared = n - at_level[0] - at_level[1];
  EXPECT_LT(fabs(blur_test::binomial_z(others, compared, 1 / g)), blur_test::kZ1e6);
}

// Through the Client: a word metric takes words only; any text is charged
// and queued (a refusal would show the text: an upper-case letter goes out
// as the reserved word "'", a word past the longest is cut to it).
TEST(PrefixExtension, ClientRecordsWords) {
  blur::sim::SimPort port(9);
  static blur::Client client;
  ASSERT_EQ(client.open(port.port()), Status::kNotProvisioned);
  ASSERT_EQ(client.provision(blur::LedgerPolicy{20000000}), Status::kOk);
  ASSERT_EQ(client.add_metric(1, blur::MechanismId::kPrefixExtension, 4000000, 10), Status::kOk);
  ASSERT_EQ(client.add_metric(2, blur::MechanismId::kGeneralizedRandomizedResponse, 1000000, 4),
            Status::kOk);
  EXPECT_EQ(client.record(1, 3), Status::kInvalidArgument);  // an index for a word metric
  EXPECT_EQ(client.record_word(2, "abc", 3), Status::kInvalidArgument);  // a word for grr
  EXPECT_EQ(client.record_word(1, nullptr, 3), Status::kInvalidArgument);  // no text at all
  EXPECT_EQ(client.ledger().spent_micros(), 0u);
  EXPECT_EQ(client.queue().pending_count(), 0u);
  ASSERT_EQ(client.record_word(1, "hello", 5), Status::kOk);
  EXPECT_EQ(client.record_word(1, "Hello", 5), Status::kOk);
  EXPECT_EQ(client.record_word(1, "abcdefghijk", 11), Status::kOk);  // > 10
  EXPECT_EQ(client.record_word(1, "", 0), Status::kOk);
  EXPECT_EQ(client.ledger().spent_micros(), 16000000u);
  EXPECT_EQ(client.queue().pending_count(), 4u);
}

TEST(Word, FittedNeverRefusesText) {
  const blur::Word reserved = blur::Word::parse(blur::kReservedWord, 1).value();
  auto same = [](const blur::Word& a, const blur::Word& b) {
    return a.low == b.low && a.high == b.high && a.length == b.length;
  };
  EXPECT_TRUE(same(blur::Word::fitted("Hello", 5, 16), reserved));
  EXPECT_TRUE(same(blur::Word::fitted("don't", 5, 16), blur::Word::parse("don't", 5).value()));
  EXPECT_TRUE(same(blur::Word::fitted("", 0, 16), reserved));
  EXPECT_TRUE(same(blur::Word::fitted(nullptr, 0, 16), reserved));
  EXPECT_TRUE(same(blur::Word::fitted("abcdefghijk", 11, 8), blur::Word::parse("abcdefgh", 8).value()));
  EXPECT_TRUE(same(blur::Word::fitted("abcdefghijklmnopqrst", 20, 16),
                   blur::Word::parse("abcdefghijklmnop", 16).value()));
  EXPECT_TRUE(same(blur::Word::fitted("abc1", 4, 16), reserved));
}

}  // namespace
