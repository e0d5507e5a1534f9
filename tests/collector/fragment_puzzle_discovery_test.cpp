// The collector's sequence-fragment-puzzle decoder (collector/src/discovery/
// fragment_puzzle_discovery.h) against the device's mechanism: the shared
// known answers, unbiased fragment and word estimates, and the heavy words
// found.
#include "discovery/fragment_puzzle_discovery.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "aggregate/aggregate.h"
#include "blur/discovery/fragment_puzzle.h"
#include "blur/sampling/rng.h"
#include "config/metric_rules.h"
#include "mechanisms/fragment_puzzle.h"
#include "kat_randomizer_outputs.inc"  // kKatRandomizerOutputs
#include "random_reports.h"
#include "sim_port.h"

namespace {

using blur::collector::Aggregate;
using blur::collector::FragmentPuzzleDecoder;
using blur::collector::MetricConfig;
using blur::SequenceFragmentPuzzle;

MetricConfig sfp_metric(uint32_t epsilon_micros, uint32_t longest) {
  MetricConfig metric;
  metric.id = 1;
  metric.mechanism = blur::MechanismId::kSequenceFragmentPuzzle;
  metric.epsilon_micros = epsilon_micros;
  metric.domain_size = longest;
  return metric;
}

blur::Word word(const std::string& text) {
  const auto parsed = blur::Word::parse(text.data(), text.size());
  EXPECT_TRUE(parsed.ok()) << text;
  return parsed.ok() ? parsed.value() : blur::Word{};
}

// An sfp report as the device's payload encoding writes it.
blur::collector::IncomingReport report(const MetricConfig& metric, uint32_t seed, uint32_t bucket) {
  blur::collector::IncomingReport r = blur_test::report_of(metric);
  r.hash_a = seed >> 16;
  r.hash_b = seed & 0xFFFF;
  r.value = bucket;
  return r;
}

// The recorded sfp reports (tests/vectors/randomizer_outputs.kat, made by
// the device's code on every platform) of one vector count for the word in
// the word sketch, and for the word's fragment at their position, exactly
// as often as the device's own hashes put them in the reported buckets;
// each position's reports are exactly those that name it.
TEST(FragmentPuzzleDiscovery, KnownAnswersAreSupportedAsTheDeviceHashes) {
  std::istringstream vectors(kKatRandomizerOutputs);
  std::string line;
  int checked = 0;
  while (std::getline(vectors, line)) {
    std::istringstream fields(line);
    uint32_t mechanism = 0, epsilon = 0, domain = 0, count = 0;
    uint64_t seed = 0;
    std::string input, outputs;
    if (line.empty() || line[0] == '#' || !(fields >> mechanism) || mechanism != 12) continue;
    ASSERT_TRUE(fields >> epsilon >> domain >> seed >> input >> count >> outputs) << line;
    const MetricConfig metric = sfp_metric(epsilon, domain);
    const uint32_t bits = SequenceFragmentPuzzle::bucket_bits(epsilon);
    const uint32_t positions = SequenceFragmentPuzzle::positions(domain);
    const blur::Word truth = word(input);
    const uint32_t piece = blur::puzzle_piece(truth);
    Aggregate all(metric);
    uint64_t word_expected = 0;
    std::vector<uint64_t> fragment_expected(positions, 0), position_expected(positions, 0);
    std::istringstream tokens(outputs);
    std::string token;
    uint32_t tokens_seen = 0;
    while (std::getline(tokens, token, ',')) {
      uint32_t a = 0, word_seed = 0, bucket = 0;
      ASSERT_EQ(std::sscanf(token.c_str(), "%u:%u:%u", &a, &word_seed, &bucket), 3) << token;
      const uint32_t position = a >> blur::kFragmentHashSeedBits;
      const uint32_t fragment_seed = a & (blur::kFragmentHashSeeds - 1);
      ASSERT_LT(position, positions) << token;
      all.add(report(metric, a << 16 | word_seed, bucket));
      word_expected +=
          blur::prefix_hash(blur::prefix_hash_key(SequenceFragmentPuzzle::kWordKeyLevel, word_seed),
                            truth, bits) == (bucket & 0xFFu);
      const uint64_t value = blur::fragment_value(piece, truth.code(2 * position),
                                                  truth.code(2 * position + 1));
      fragment_expected[position] +=
          blur::fragment_hash(position, fragment_seed, value, bits) == bucket >> 8;
      ++position_expected[position];
      ++tokens_seen;
    }
    EXPECT_EQ(tokens_seen, count);
    const std::vector<uint64_t> tally = all.tally();
    const FragmentPuzzleDecoder decoder(metric, tally, all.reports());
    ASSERT_EQ(decoder.positions(), positions);
    std::vector<uint8_t> hashes(blur::kPrefixHashSeeds);
    decoder.word_table().hash(truth, hashes.data());
    EXPECT_EQ(decoder.word_table().support(decoder.word_counts(), hashes.data(), nullptr),
              word_expected)
        << line;
    for (uint32_t p = 0; p < positions; ++p) {
      EXPECT_EQ(decoder.position_reports(p), position_expected[p]);
      // All 193,792 triples of a position at once: ~0.2 s (seconds under
      // the sanitizers), so only the vectors of up to 10 characters.
      if (domain > 10) continue;
      const uint32_t first = truth.code(2 * p), second = truth.code(2 * p + 1);
      const std::vector<uint64_t> support = decoder.fragment_support(p);
      EXPECT_EQ(support[(first * blur::kWordAlphabet + second) * blur::kPuzzlePieces + piece],
                fragment_expected[p])
          << input << " position " << p;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 5 + 1 + 5);
}

struct Population {
  std::vector<std::pair<std::string, uint32_t>> words;  // decreasing count
  uint64_t total = 0;
};

// 6 heavy words (two sharing their first fragment, one of the longest
// length, one of a single character), 3 lighter ones, and 400 rare words
// of 25 devices each.
Population population() {
  Population p;
  p.words = {{"the", 12000},   {"theorem", 9000}, {"lucid", 8000},  {"sunsets", 7000},
             {"a", 6500},      {"isn't", 6000},   {"zebra", 900},   {"they", 700},
             {"query", 500}};
  for (int i = 0; i < 400; ++i) {
    std::string rare = "r";
    for (int v = i; v > 0 || rare.size() < 4; v /= 26)
      rare.push_back(static_cast<char>('a' + v % 26));
    p.words.push_back({rare, 25});
  }
  for (const auto& [w, c] : p.words) p.total += c;
  return p;
}

Aggregate randomize_all(const MetricConfig& metric, const Population& p, uint64_t seed) {
  const auto sfp = SequenceFragmentPuzzle::create(metric.epsilon_micros, metric.domain_size);
  EXPECT_TRUE(sfp.ok());
  blur::sim::SimPort port(seed);
  blur::Rng rng;
  EXPECT_EQ(rng.seed(port.port(), nullptr, 0), blur::Status::kOk);
  Aggregate aggregate(metric);
  for (const auto& [text, count] : p.words) {
    const blur::Word w = word(text);
    for (uint32_t i = 0; i < count; ++i) {
      uint32_t hash_seed = 0, bucket = 0;
      EXPECT_EQ(sfp.value().randomize(rng, w, &hash_seed, &bucket), blur::Status::kOk);
      aggregate.add(report(metric, hash_seed, bucket));
    }
  }
  return aggregate;
}

// Fragment and word estimates are unbiased: within 4.5 of their standard
// errors of the truth (false alarm 7e-6 per check, about 1e-3 over the
// checks here; the discovered words' errors include the seed table's
// collisions). Every fragment of every heavy word is checked, and fragments
// nobody has. A wrong p or q (eps instead of eps / 2), a fragment read
// from the wrong position, or tables that disagree with the device move the
// heavy words' estimates by tens of standard errors at this size.
TEST(FragmentPuzzleDiscovery, FindsTheHeavyWordsWithUnbiasedEstimates) {
  const MetricConfig metric = sfp_metric(4000000, 8);
  const Population p = population();
  const Aggregate aggregate = randomize_all(metric, p, 2026);
  ASSERT_EQ(aggregate.reports(), p.total);
  const std::vector<uint64_t> tally = aggregate.tally();
  const FragmentPuzzleDecoder decoder(metric, tally, aggregate.reports());
  ASSERT_EQ(decoder.positions(), 4u);

  // The truth of every (position, piece, first, second) from the population.
  std::map<std::tuple<uint32_t, uint32_t, uint32_t, uint32_t>, uint64_t> fragments;
  for (const auto& [text, count] : p.words) {
    const blur::Word w = word(text);
    for (uint32_t i = 0; i < decoder.positions(); ++i) {
      fragments[{i, blur::puzzle_piece(w), w.code(2 * i), w.code(2 * i + 1)}] += count;
    }
  }
  int checked = 0;
  for (size_t h = 0; h < 6; ++h) {
    const blur::Word w = word(p.words[h].first);
    for (uint32_t i = 0; i < decoder.positions(); ++i) {
      const auto key = std::make_tuple(i, blur::puzzle_piece(w), w.code(2 * i), w.code(2 * i + 1));
      const double truth = static_cast<double>(fragments[key]);
      const auto e = decoder.fragment(i, std::get<1>(key), std::get<2>(key), std::get<3>(key));
      EXPECT_LT(std::fabs(e.count - truth), 4.5 * e.std_error)
          << p.words[h].first << " position " << i << ": " << e.count << " +- " << e.std_error
          << ", truth " << truth;
      ++checked;
      // The same fragment under a piece nobody with these characters has.
      for (uint32_t other = 0; other < blur::kPuzzlePieces; ++other) {
        if (fragments.count({i, other, std::get<2>(key), std::get<3>(key)}) != 0) continue;
        const auto absent = decoder.fragment(i, other, std::get<2>(key), std::get<3>(key));
        EXPECT_LT(std::fabs(absent.count), 4.5 * absent.std_error)
            << p.words[h].first << " position " << i << " piece " << other;
        ++checked;
        break;
      }
    }
  }
  EXPECT_EQ(checked, 48);

  blur::collector::DiscoveryOptions options;
  options.top_k = 6;
  const auto found =
      blur::collector::discover_words(metric, tally, aggregate.reports(), options);
  ASSERT_EQ(found.words.size(), 6u);
  for (size_t i = 0; i < found.words.size(); ++i) {
    const auto& w = found.words[i];
    uint32_t truth = 0;
    for (const auto& [text, count] : p.words) truth = text == w.word ? count : truth;
    EXPECT_GE(truth, 6000u) << "not a heavy word: " << w.word;
    EXPECT_LT(std::fabs(w.estimate.count - truth), 4.5 * w.estimate.std_error)
        << w.word << " estimated " << w.estimate.count << " +- " << w.estimate.std_error
        << ", truth " << truth;
    EXPECT_LE(w.estimate.ci95_low, w.estimate.count);
    if (i > 0) {
      EXPECT_GE(found.words[i - 1].estimate.count, w.estimate.count);
    }
  }
  // Words outside the top, and one nobody has, from the word sketch.
  for (const auto& [text, truth] : std::vector<std::pair<std::string, uint32_t>>{
           {"zebra", 900}, {"they", 700}, {"absent", 0}, {"theorem", 9000}}) {
    const auto e = blur::collector::estimate_candidate(metric, tally, aggregate.reports(),
                                                       word(text), true);
    EXPECT_LT(std::fabs(e.count - truth), 4.5 * e.std_error)
        << text << " estimated " << e.count << " +- " << e.std_error << ", truth " << truth;
  }
}

// A report's two halves each realize epsilon / 2: with the word's bucket
// and the fragment's bucket counted separately over many reports of one
// word, each keeps its truth with p = e^{eps/2} / (e^{eps/2} + 2^g - 1).
// At 200,000 reports the binomial's standard error is 0.0011; a half at
// the full epsilon (p 0.69 instead of 0.51 at eps = 4) is 160 errors away.
// False alarm of each check: 7e-6 (4.5 standard errors).
TEST(FragmentPuzzleDiscovery, EachHalfKeepsItsTruthAtHalfTheEpsilon) {
  const MetricConfig metric = sfp_metric(4000000, 6);
  const auto sfp = SequenceFragmentPuzzle::create(metric.epsilon_micros, metric.domain_size);
  ASSERT_TRUE(sfp.ok());
  const uint32_t bits = SequenceFragmentPuzzle::bucket_bits(metric.epsilon_micros);
  ASSERT_EQ(bits, 3u);
  const double p = blur::collector::fragment_puzzle_params(metric).p;
  EXPECT_NEAR(p, std::exp(2.0) / (std::exp(2.0) + 7), 1e-12);
  blur::sim::SimPort port(99);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), nullptr, 0), blur::Status::kOk);
  const blur::Word w = word("lucid");
  const uint32_t piece = blur::puzzle_piece(w);
  const uint32_t n = 200000;
  uint32_t word_kept = 0, fragment_kept = 0;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t seed = 0, bucket = 0;
    ASSERT_EQ(sfp.value().randomize(rng, w, &seed, &bucket), blur::Status::kOk);
    const uint32_t word_seed = seed & 0xFFFF, a = seed >> 16;
    const uint32_t position = a >> blur::kFragmentHashSeedBits;
    const uint32_t fragment_seed = a & (blur::kFragmentHashSeeds - 1);
    word_kept += blur::prefix_hash(blur::prefix_hash_key(0, word_seed), w, bits) == (bucket & 0xFF);
    fragment_kept += blur::fragment_hash(position, fragment_seed,
                                         blur::fragment_value(piece, w.code(2 * position),
                                                              w.code(2 * position + 1)),
                                         bits) == bucket >> 8;
  }
  const double error = std::sqrt(p * (1 - p) / n);
  EXPECT_LT(std::fabs(word_kept / double{n} - p), 4.5 * error) << word_kept;
  EXPECT_LT(std::fabs(fragment_kept / double{n} - p), 4.5 * error) << fragment_kept;
}

// Fleets of one fragment position (2-letter words, eps = 4: 8 buckets),
// each report simulated from the device's law: a uniform fixed seed, the
// SDK's fragment_hash, the bucket kept with probability p, else another
// uniform. The SDK's own randomizer is checked against that law by
// EachHalfKeepsItsTruthAtHalfTheEpsilon and the known answers; it takes
// 1.2 us a report, too slow for the 10^8 reports of the coverage test.
class OnePositionFleet {
 public:
  OnePositionFleet()
      : metric_(sfp_metric(4000000, 2)),
        shape_(blur::collector::fragment_puzzle_shape(metric_)),
        bits_(SequenceFragmentPuzzle::bucket_bits(metric_.epsilon_micros)),
        kept_(blur::collector::fragment_puzzle_params(metric_).p),
        other_bucket_(1, (1u << bits_) - 1),
        tally_(shape_.cells()),
        truth_bucket_(blur::kFragmentHashSeeds) {}

  const MetricConfig& metric() const { return metric_; }
  uint32_t bucket_bits() const { return bits_; }
  uint32_t positions() const { return shape_.positions; }
  std::mt19937_64& rng() { return rng_; }

  // `count` distinct random 2-letter words.
  std::vector<blur::Word> distinct_words(size_t count) {
    std::uniform_int_distribution<int> letter(0, 25);
    std::vector<blur::Word> words;
    while (words.size() < count) {
      const std::string text{static_cast<char>('a' + letter(rng_)),
                             static_cast<char>('a' + letter(rng_))};
      const blur::Word w = word(text);
      bool fresh = true;
      for (const blur::Word& u : words) fresh = fresh && (u.low != w.low || u.high != w.high);
      if (fresh) words.push_back(w);
    }
    return words;
  }

  // The tally of counts[i] devices with words[i]; reports() their number.
  const std::vector<uint64_t>& randomize(const std::vector<blur::Word>& words,
                                         const std::vector<uint32_t>& counts) {
    std::fill(tally_.begin(), tally_.end(), 0);
    reports_ = 0;
    const uint32_t buckets = 1u << bits_;
    std::uniform_int_distribution<uint32_t> seed_of(0, blur::kFragmentHashSeeds - 1);
    for (size_t i = 0; i < words.size(); ++i) {
      const blur::Word& w = words[i];
      const uint64_t value = blur::fragment_value(blur::puzzle_piece(w), w.code(0), w.code(1));
      for (uint32_t seed = 0; seed < blur::kFragmentHashSeeds; ++seed) {
        truth_bucket_[seed] = blur::fragment_hash(0, seed, value, bits_);
      }
      for (uint32_t d = 0; d < counts[i]; ++d) {
        const uint32_t seed = seed_of(rng_);
        uint32_t bucket = truth_bucket_[seed];
        if (!kept_(rng_)) bucket = (bucket + other_bucket_(rng_)) % buckets;
        ++tally_[shape_.fragment_offset(0) + (size_t{seed} << bits_) + bucket];
        ++reports_;
      }
    }
    return tally_;
  }
  uint64_t reports() const { return reports_; }

 private:
  MetricConfig metric_;
  blur::collector::FragmentPuzzleShape shape_;
  uint32_t bits_;
  std::mt19937_64 rng_{20261126};
  std::bernoulli_distribution kept_;
  std::uniform_int_distribution<uint32_t> other_bucket_;
  std::vector<uint64_t> tally_;
  std::vector<uint32_t> truth_bucket_;
  uint64_t reports_ = 0;
};

blur::collector::CountEstimate fragment_of(const FragmentPuzzleDecoder& decoder,
                                           const blur::Word& w) {
  return decoder.fragment(0, blur::puzzle_piece(w), w.code(0), w.code(1));
}

// The fragment estimates' 95% intervals cover their truth once the fixed
// fragment seed table's variance is in them (docs/math.md §3.12). Each of
// the populations has three heavy words of 8,000 devices and a target word
// of 0 or 2,000, drawn at random: another value shares the target's bucket
// on a fraction of the 1,024 fixed seeds that depends on the pair, so over
// the populations that fraction is a random draw, as the variance assumes.
// At this size the table's spread is 1.2 times the randomized response's
// standard error, so intervals without it cover about 0.78 of the time. The
// plug-in squares are fragment_squares() over the four words' fragments and
// 4 absent triples. Fixed seeds. The coverage must be within 0.95 +- 4.1
// binomial standard errors (0.95 +- 0.02 at 2,000 populations, +- 0.04 at
// 500 under the sanitizers): false alarm 4e-5 if the intervals cover 95%.
// Without the table's variance they must cover less than 0.90, so the test
// keeps the power to catch a missing term.
TEST(FragmentPuzzleDiscovery, FragmentIntervalsCoverWithTheSeedTableVariance) {
#if defined(__SANITIZE_ADDRESS__)
  const int kPopulations = 500;  // the sanitizer build checks memory, at a quarter of the power
  const double tolerance = 0.04;
#else
  const int kPopulations = 2000;
  const double tolerance = 0.02;
#endif
  OnePositionFleet fleet;
  ASSERT_EQ(fleet.bucket_bits(), 3u);
  ASSERT_EQ(fleet.positions(), 1u);
  std::uniform_int_distribution<uint32_t> any_piece(0, blur::kPuzzlePieces - 1),
      any_code(1, blur::kWordAlphabet - 1);
  int covered = 0, covered_without = 0;
  double table_share = 0;  // the table's share of the variance, averaged
  for (int r = 0; r < kPopulations; ++r) {
    const std::vector<blur::Word> words = fleet.distinct_words(4);  // the target first
    const std::vector<uint32_t> counts = {r % 2 == 0 ? 0u : 2000u, 8000, 8000, 8000};
    const std::vector<uint64_t>& tally = fleet.randomize(words, counts);
    const FragmentPuzzleDecoder decoder(fleet.metric(), tally, fleet.reports());
    std::vector<blur::collector::CountEstimate> estimates;
    for (const blur::Word& w : words) estimates.push_back(fragment_of(decoder, w));
    for (int a = 0; a < 4; ++a) {
      estimates.push_back(
          decoder.fragment(0, any_piece(fleet.rng()), any_code(fleet.rng()), any_code(fleet.rng())));
    }
    const double squares = decoder.fragment_squares(estimates);
    const auto without = estimates[0];
    const auto with = decoder.with_fragment_table_variance(without, squares);
    const double truth = counts[0];
    covered += with.ci95_low <= truth && truth <= with.ci95_high ? 1 : 0;
    covered_without += without.ci95_low <= truth && truth <= without.ci95_high ? 1 : 0;
    table_share += 1 - (without.std_error * without.std_error) / (with.std_error * with.std_error);
  }
  const double coverage = covered / double{kPopulations};
  const double coverage_without = covered_without / double{kPopulations};
  std::printf(
      "sfp fragments, %d populations: 95%% interval coverage %.4f with the seed table's "
      "variance (%.2f of it on average), %.4f without\n",
      kPopulations, coverage, table_share / kPopulations, coverage_without);
  EXPECT_NEAR(coverage, 0.95, tolerance);
  EXPECT_LT(coverage_without, 0.90);
}

// The plug-in over a whole position, as discovery computes it: every
// triple's estimate, of which all but the four words' are nobody's. The
// table puts a ghost of the heavy words in every triple, spread 1.2 times
// the randomized response's standard error, so a sum of the squares of the
// estimates 4.5 randomized-response errors above zero takes in hundreds of
// ghosts (about twice the truth here: at least 1.3 times is asserted); the
// fragment_squares() rule keeps the words alone. Its result is within 15%
// of the true sum of squares (the heavy words' errors make about 3%: 5
// standard errors, false alarm under 1e-6 per population); five
// populations (two under the sanitizers), fixed seeds.
TEST(FragmentPuzzleDiscovery, PositionSquaresLeaveTheTableGhostsOut) {
#if defined(__SANITIZE_ADDRESS__)
  const int kPopulations = 2;  // a position's 193,792 triples take 2 s each there
#else
  const int kPopulations = 5;
#endif
  OnePositionFleet fleet;
  for (int r = 0; r < kPopulations; ++r) {
    const std::vector<blur::Word> words = fleet.distinct_words(4);
    const std::vector<uint32_t> counts = {2000, 8000, 8000, 8000};
    const std::vector<uint64_t>& tally = fleet.randomize(words, counts);
    const FragmentPuzzleDecoder decoder(fleet.metric(), tally, fleet.reports());
    const std::vector<uint64_t> support = decoder.fragment_support(0);
    std::vector<blur::collector::CountEstimate> estimates;
    double above_noise = 0;  // the squares 4.5 randomized-response errors above zero
    for (const uint64_t s : support) {
      estimates.push_back(decoder.fragment_estimate(0, s));
      const auto& e = estimates.back();
      if (e.count >= blur::collector::kFragmentSquaresZ * e.std_error) above_noise += e.count * e.count;
    }
    double truth = 0;
    for (const uint32_t c : counts) truth += static_cast<double>(c) * c;
    const double squares = decoder.fragment_squares(estimates);
    std::printf("population %d: squares %.4g (truth %.4g, above the noise alone %.4g)\n", r,
                squares, truth, above_noise);
    EXPECT_NEAR(squares / truth, 1.0, 0.15) << r;
    EXPECT_GT(above_noise / truth, 1.3) << r;
  }
}

// Nothing to find: no reports, no words.
TEST(FragmentPuzzleDiscovery, EmptyTallyFindsNothing) {
  const MetricConfig metric = sfp_metric(2000000, 5);
  const Aggregate aggregate(metric);
  const auto found = blur::collector::discover_words(metric, aggregate.tally(), 0, {});
  EXPECT_EQ(found.reports, 0u);
  EXPECT_TRUE(found.words.empty());
}

// Every fragment's support read cell by cell (a position with few reports)
// and in the dense pass (many) is the count of the position's reports whose
// fragment bucket is the fragment's hash, at g = 3 (eps 4) and g = 6 (eps 16).
// 200 fragments checked (20 under the sanitizers, where hashing every
// report for each of them took most of the test's time; both passes still
// read every cell there).
TEST(FragmentPuzzleDiscovery, FragmentSupportCountsEveryReportBothWays) {
#if defined(__SANITIZE_ADDRESS__)
  const int kChecks = 20;
#else
  const int kChecks = 200;
#endif
  for (const uint32_t epsilon : {4000000u, 16000000u}) {
    const MetricConfig metric = sfp_metric(epsilon, 6);
    const uint32_t bits = SequenceFragmentPuzzle::bucket_bits(epsilon);
    for (const uint32_t reports : {300u, 200000u}) {
      std::mt19937_64 rng(reports + epsilon);
      Aggregate aggregate(metric);
      std::vector<std::pair<uint32_t, uint32_t>> position_one;  // (fragment seed, bucket)
      for (uint32_t i = 0; i < reports; ++i) {
        const uint32_t seed = static_cast<uint32_t>(rng() % blur::kFragmentHashSeeds);
        const uint32_t bucket = static_cast<uint32_t>(rng() % (1u << bits));
        aggregate.add(
            report(metric, (1u << blur::kFragmentHashSeedBits | seed) << 16, bucket << 8));
        position_one.emplace_back(seed, bucket);
      }
      const std::vector<uint64_t> tally = aggregate.tally();
      const FragmentPuzzleDecoder decoder(metric, tally, aggregate.reports());
      const std::vector<uint64_t> support = decoder.fragment_support(1);
      for (int check = 0; check < kChecks; ++check) {
        const uint32_t piece = static_cast<uint32_t>(rng() % blur::kPuzzlePieces);
        const uint32_t first = 1 + static_cast<uint32_t>(rng() % 27);
        const uint32_t second = static_cast<uint32_t>(rng() % blur::kWordAlphabet);
        const uint64_t value = blur::fragment_value(piece, first, second);
        uint64_t expected = 0;
        for (const auto& [seed, bucket] : position_one) {
          expected += blur::fragment_hash(1, seed, value, bits) == bucket ? 1 : 0;
        }
        EXPECT_EQ(support[(first * blur::kWordAlphabet + second) * blur::kPuzzlePieces + piece],
                  expected)
            << "eps " << epsilon << ", " << reports << " reports";
      }
    }
  }
}

}  // namespace
