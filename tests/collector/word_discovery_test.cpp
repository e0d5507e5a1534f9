// The collector's word discovery (collector/src/discovery/) against the
// device's prefix extension: the shared known answers, unbiased word and
// prefix estimates, and the top words found.
#include "discovery/word_discovery.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "aggregate/aggregate.h"
#include "blur/discovery/prefix_extension.h"
#include "blur/sampling/rng.h"
#include "config/metric_rules.h"
#include "discovery/discovery_cache.h"
#include "discovery/level_tally.h"
#include "discovery/support_kernels.h"
#include "kat_randomizer_outputs.inc"  // kKatRandomizerOutputs
#include "random_reports.h"
#include "sim_port.h"

namespace {

using blur::collector::Aggregate;
using blur::collector::MetricConfig;
using blur::collector::PrefixSupport;

MetricConfig pem_metric(uint32_t epsilon_micros, uint32_t longest) {
  MetricConfig metric;
  metric.id = 1;
  metric.mechanism = blur::MechanismId::kPrefixExtension;
  metric.epsilon_micros = epsilon_micros;
  metric.domain_size = longest;
  return metric;
}

blur::Word word(const std::string& text) {
  const auto parsed = blur::Word::parse(text.data(), text.size());
  EXPECT_TRUE(parsed.ok()) << text;
  return parsed.ok() ? parsed.value() : blur::Word{};
}

// A pem report: seed = level << 16 | hash seed, as the device writes it.
blur::collector::IncomingReport report(const MetricConfig& metric, uint32_t seed, uint32_t bucket) {
  blur::collector::IncomingReport r = blur_test::report_of(metric);
  r.hash_a = seed >> 16;
  r.hash_b = seed & 0xFFFF;
  r.value = bucket;
  return r;
}

// Each recorded pem report (tests/vectors/randomizer_outputs.kat, made by
// the device's code on every platform) is supported by the collector's
// tables exactly when the device's own hash puts the word's prefix in the
// reported bucket, and the reports of the word's level count it.
TEST(WordDiscovery, KnownAnswersAreSupportedAsTheDeviceHashes) {
  std::istringstream vectors(kKatRandomizerOutputs);
  std::string line;
  int checked = 0;
  while (std::getline(vectors, line)) {
    std::istringstream fields(line);
    uint32_t mechanism = 0, epsilon = 0, domain = 0, count = 0;
    uint64_t seed = 0;
    std::string input, outputs;
    if (line.empty() || line[0] == '#' || !(fields >> mechanism) || mechanism != 11) continue;
    ASSERT_TRUE(fields >> epsilon >> domain >> seed >> input >> count >> outputs) << line;
    const MetricConfig metric = pem_metric(epsilon, domain);
    const PrefixSupport support(metric);
    const uint32_t bits = blur::PrefixExtension::bucket_bits(epsilon);
    const blur::Word truth = word(input);
    std::istringstream tokens(outputs);
    std::string token;
    uint32_t tokens_seen = 0;
    while (std::getline(tokens, token, ',')) {
      uint32_t level = 0, hash_seed = 0, bucket = 0;
      ASSERT_EQ(std::sscanf(token.c_str(), "%u:%u:%u", &level, &hash_seed, &bucket), 3) << token;
      Aggregate one(metric);
      one.add(report(metric, level << 16 | hash_seed, bucket));
      const blur::Word prefix = truth.prefix(blur::PrefixExtension::prefix_length(level));
      const bool device_says =
          blur::prefix_hash(blur::prefix_hash_key(level, hash_seed), prefix, bits) == bucket;
      EXPECT_EQ(support.count(one.tally(), level, truth), device_says ? 1u : 0u) << token;
      ++tokens_seen;
      ++checked;
    }
    EXPECT_EQ(tokens_seen, count);
  }
  EXPECT_GE(checked, 48);
}

struct Population {
  std::vector<std::pair<std::string, uint32_t>> words;  // decreasing count
  uint64_t total = 0;
};

// 8 heavy words (two sharing a prefix, one of the longest length), 4
// lighter ones, and 300 rare words of 20 devices each.
Population population() {
  Population p;
  p.words = {{"the", 9000},      {"lucid", 7000}, {"theorem", 5500}, {"sunsets", 4500},
             {"quixotic", 3800}, {"a", 3200},     {"wrests", 2700},  {"isn't", 2300},
             {"zebra", 700},     {"they", 500},   {"query", 400},    {"bamboo", 300}};
  for (int i = 0; i < 300; ++i) {
    std::string rare = "r";
    for (int v = i; v > 0 || rare.size() < 4; v /= 26)
      rare.push_back(static_cast<char>('a' + v % 26));
    p.words.push_back({rare, 20});
  }
  for (const auto& [w, c] : p.words) p.total += c;
  return p;
}

// Every device of the population randomized by the SDK's mechanism.
Aggregate randomize_all(const MetricConfig& metric, const Population& p, uint64_t seed) {
  const auto pem = blur::PrefixExtension::create(metric.epsilon_micros, metric.domain_size);
  EXPECT_TRUE(pem.ok());
  blur::sim::SimPort port(seed);
  blur::Rng rng;
  EXPECT_EQ(rng.seed(port.port(), nullptr, 0), blur::Status::kOk);
  Aggregate aggregate(metric);
  for (const auto& [text, count] : p.words) {
    const blur::Word w = word(text);
    for (uint32_t i = 0; i < count; ++i) {
      uint32_t hash_seed = 0, bucket = 0;
      EXPECT_EQ(pem.value().randomize(rng, w, &hash_seed, &bucket), blur::Status::kOk);
      aggregate.add(report(metric, hash_seed, bucket));
    }
  }
  return aggregate;
}

// Word and prefix estimates are unbiased: within 4.5 of their standard
// errors of the truth (false alarm 7e-6 per check; the standard errors of
// discovered words include the seed table's collisions). A wrong p or q,
// a level mixed up with another, or a hash the tables disagree with moves
// the heavy words by many standard errors at this size.
TEST(WordDiscovery, FindsTheHeavyWordsWithUnbiasedEstimates) {
  const MetricConfig metric = pem_metric(4000000, 8);
  const Population p = population();
  const Aggregate aggregate = randomize_all(metric, p, 2024);
  ASSERT_EQ(aggregate.reports(), p.total);

  blur::collector::DiscoveryOptions options;
  options.top_k = 8;
  const auto found =
      blur::collector::discover_words(metric, aggregate.tally(), aggregate.reports(), options);
  ASSERT_EQ(found.words.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    const auto& w = found.words[i];
    uint32_t truth = 0;
    for (const auto& [text, count] : p.words) truth = text == w.word ? count : truth;
    EXPECT_GT(truth, 2000u) << "not a heavy word: " << w.word;
    EXPECT_LT(std::fabs(w.estimate.count - truth), 4.5 * w.estimate.std_error)
        << w.word << " estimated " << w.estimate.count << " +- " << w.estimate.std_error
        << ", truth " << truth;
    EXPECT_LE(w.estimate.ci95_low, w.estimate.count);
    if (i > 0) {
      EXPECT_GE(found.words[i - 1].estimate.count, w.estimate.count);
    }
  }

  // Prefixes (devices whose word starts with it) and words outside the top.
  struct Check {
    const char* text;
    bool finished;
    uint32_t truth;
  };
  const Check checks[] = {{"th", false, 9000 + 5500 + 500},
                          {"theo", false, 5500},
                          {"lu", false, 7000},
                          {"zebra", true, 700},
                          {"they", true, 500},
                          {"absent", true, 0},
                          {"theorem", true, 5500}};
  for (const Check& c : checks) {
    const auto e = blur::collector::estimate_candidate(
        metric, aggregate.tally(), aggregate.reports(), word(c.text), c.finished);
    EXPECT_LT(std::fabs(e.count - c.truth), 4.5 * e.std_error)
        << c.text << " estimated " << e.count << " +- " << e.std_error << ", truth " << c.truth;
  }
}

// Nothing to find: no reports, no words.
TEST(WordDiscovery, EmptyTallyFindsNothing) {
  const MetricConfig metric = pem_metric(2000000, 5);
  const Aggregate aggregate(metric);
  const auto found = blur::collector::discover_words(metric, aggregate.tally(), 0, {});
  EXPECT_EQ(found.reports, 0u);
  EXPECT_TRUE(found.words.empty());
}

// The kernels (support_kernels.h) against the support rule, on every kind
// of level LevelTally makes: dense, sparse with few seeds (column by
// column hashing) and sparse with many (whole-seed hashing).
TEST(WordDiscovery, KernelsMatchTheSupportRule) {
  const MetricConfig metric = pem_metric(4000000, 16);  // 15 levels: kept sparse
  Aggregate aggregate(metric);
  std::mt19937_64 rng(7);
  const uint32_t bits = blur::PrefixExtension::bucket_bits(metric.epsilon_micros);
  // Level 0: 40 reports (few seeds); level 1: 20,000 (many); level 2 dense.
  for (int i = 0; i < 40; ++i) {
    aggregate.add(report(metric, static_cast<uint32_t>(rng() % 16384), rng() % (1u << bits)));
  }
  for (int i = 0; i < 20000; ++i) {
    aggregate.add(report(metric, 1u << 16 | static_cast<uint32_t>(rng() % 16384),
                         static_cast<uint32_t>(rng() % (1u << bits))));
  }
  for (uint32_t seed = 0; seed < 16384; ++seed) {
    for (uint32_t bucket = 0; bucket < 24; ++bucket) {
      aggregate.add(report(metric, 2u << 16 | seed, (bucket * 7 + seed) % (1u << bits)),
                    1 + rng() % 3);
    }
  }
  const blur::collector::LevelTally levels(aggregate);
  ASSERT_EQ(levels.level(0).dense, nullptr);
  ASSERT_LT(levels.level(0).columns() * 16, 16384u);
  ASSERT_EQ(levels.level(1).dense, nullptr);
  ASSERT_GE(levels.level(1).columns() * 16, 16384u);
  ASSERT_NE(levels.level(2).dense, nullptr);
  const std::vector<uint64_t> tally = aggregate.tally();
  const PrefixSupport support(metric);
  const blur::collector::Cancellation never;
  for (uint32_t level = 0; level < 3; ++level) {
    const uint32_t at = blur::PrefixExtension::prefix_length(level) - 1;
    std::vector<blur::Word> parents;
    for (int i = 0; i < 5; ++i) {
      blur::Word w{0, 0, at};
      for (uint32_t c = 0; c < at; ++c) w = w.with(c, 1 + static_cast<uint32_t>(rng() % 27));
      parents.push_back(w);
    }
    std::vector<uint64_t> sums, ends;
    ASSERT_TRUE(blur::collector::child_supports(levels.level(level), support.table(level), at,
                                                parents, &sums, never));
    ASSERT_TRUE(blur::collector::end_supports(levels.level(level), support.table(level), parents,
                                              &ends, never));
    for (size_t p = 0; p < parents.size(); ++p) {
      EXPECT_EQ(ends[p], support.count(tally, level, parents[p])) << level;
      EXPECT_EQ(sums[p * 28], ends[p]) << level;  // the end code: the parent padded
      for (uint32_t code = 1; code < 28; ++code) {
        blur::Word child = parents[p].with(at, code);
        child.length = at + 1;
        EXPECT_EQ(sums[p * 28 + code], support.count(tally, level, child)) << level << " " << code;
      }
    }
  }
}

// The same words and estimates from the aggregate read sparse (its levels
// sparse or dense by their cells) as from the dense tally.
TEST(WordDiscovery, SparseAndDenseReadingsAgree) {
  const MetricConfig metric = pem_metric(4000000, 16);
  Aggregate aggregate = randomize_all(metric, population(), 99);
  // Noise that makes the last level dense for LevelTally (24 cells a seed).
  for (uint32_t seed = 0; seed < 16384; ++seed) {
    for (uint32_t bucket = 0; bucket < 24; ++bucket) {
      aggregate.add(report(metric, 14u << 16 | seed, (bucket * 7 + seed) % 64));
    }
  }
  ASSERT_EQ(aggregate.dense_tally(), nullptr);
  ASSERT_NE(blur::collector::LevelTally(aggregate).level(14).dense, nullptr);
  blur::collector::DiscoveryOptions options;
  options.top_k = 8;  // a beam of 64: the dense reading is 15 levels of 2^14 lookups a candidate
  const auto sparse = blur::collector::discover_words(aggregate, options);
  const auto dense =
      blur::collector::discover_words(metric, aggregate.tally(), aggregate.reports(), options);
  ASSERT_GE(sparse.words.size(), 5u);
  ASSERT_EQ(sparse.words.size(), dense.words.size());
  for (size_t i = 0; i < sparse.words.size(); ++i) {
    EXPECT_EQ(sparse.words[i].word, dense.words[i].word);
    EXPECT_EQ(sparse.words[i].estimate.count, dense.words[i].estimate.count);
    EXPECT_EQ(sparse.words[i].estimate.std_error, dense.words[i].estimate.std_error);
  }
  EXPECT_EQ(sparse.candidates_evaluated, dense.candidates_evaluated);
}

// A cancelled discovery (its deadline passed) answers no words, pem and sfp.
TEST(WordDiscovery, CancelledDiscoveryAnswersNothing) {
  const MetricConfig metric = pem_metric(4000000, 8);
  const Aggregate aggregate = randomize_all(metric, population(), 5);
  const std::atomic<bool> stopping{true};
  const blur::collector::Cancellation cancel(
      blur::collector::Cancellation::Clock::time_point::max(), &stopping);
  blur::collector::DiscoveryOptions options;
  options.cancel = &cancel;
  const auto found = blur::collector::discover_words(aggregate, options);
  EXPECT_TRUE(found.cancelled);
  EXPECT_TRUE(found.words.empty());
  MetricConfig sfp = metric;
  sfp.mechanism = blur::MechanismId::kSequenceFragmentPuzzle;
  const Aggregate empty_sfp(sfp);
  Aggregate one(sfp);
  std::mt19937_64 rng(1);
  one.add(blur_test::random_report(sfp, rng));
  const auto fragments = blur::collector::discover_words(one, options);
  EXPECT_TRUE(fragments.cancelled);
  EXPECT_TRUE(fragments.words.empty());
}

// The cache answers what was put under a key, never for another key, and
// drops the least recently used once past its capacity.
TEST(WordDiscovery, CacheKeepsRecentResultsByKey) {
  blur::collector::DiscoveryCache cache(3);  // words (+1 per entry)
  blur::collector::Discovery found;
  found.reports = 10;
  found.words.push_back({"the", {5, 1, 3, 7}});
  const blur::collector::DiscoveryCache::Key a{1, 32, 10, 111}, b{1, 32, 10, 222};
  cache.put(a, found);
  ASSERT_TRUE(cache.find(a).has_value());
  EXPECT_EQ(cache.find(a)->words[0].word, "the");
  EXPECT_FALSE(cache.find(b).has_value());
  EXPECT_FALSE(cache.find({1, 33, 10, 111}).has_value());  // another top_k
  blur::collector::Discovery cancelled;
  cancelled.cancelled = true;
  cache.put(b, cancelled);
  EXPECT_FALSE(cache.find(b).has_value());  // a cancelled discovery is not kept
  cache.put(b, found);                      // 4 words' room: a goes
  EXPECT_FALSE(cache.find(a).has_value());
  EXPECT_TRUE(cache.find(b).has_value());
  EXPECT_GE(cache.hits(), 3u);
}

}  // namespace
