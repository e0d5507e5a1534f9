// The collector's word discovery (collector/src/discovery/) against the
// device's prefix extension: the shared known answers, unbiased word and
// prefix estimates, and the top words found.
#include "discovery/word_discovery.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "aggregate/aggregate.h"
#include "blur/discovery/prefix_extension.h"
#include "blur/sampling/rng.h"
#include "kat_randomizer_outputs.inc"  // kKatRandomizerOutputs
#include "metrics/metric_config.h"
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

}  // namespace
