#include "trainer/data/vocabulary.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>

#include "scratch_files.h"
#include "trainer/random/drbg_stream.h"

namespace {

using namespace blur::trainer;
using blur::test::scratch_file;

constexpr double kNoThreshold = -std::numeric_limits<double>::infinity();

std::string write(const std::string& name, const std::string& bytes) {
  return blur::test::write_file(blur::test::scratch_dir(), name, bytes);
}

template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const VocabularyError& e) {
    return e.what();
  }
  return "";
}

Unit unit_of(const std::string& text) { return Unit{text, {text}}; }

const PublicWordList& wamerican() {
  static const PublicWordList list = PublicWordList::load();
  return list;
}

// --- Vocabulary ---------------------------------------------------------------

TEST(Vocabulary, SpecialTokensComeFirst) {
  const Vocabulary vocabulary = Vocabulary::from_words({"the", "cat", "the", "", "<unk>", "sat"});
  EXPECT_EQ(vocabulary.words(),
            (std::vector<std::string>{"<pad>", "<unk>", "<s>", "</s>", "the", "cat", "sat"}));
  EXPECT_EQ(vocabulary.id("<pad>"), Vocabulary::kPad);
  EXPECT_EQ(vocabulary.id("</s>"), Vocabulary::kEnd);
  EXPECT_EQ(vocabulary.id("cat"), 5);
  EXPECT_EQ(vocabulary.id("dog"), Vocabulary::kUnknown);
  EXPECT_EQ(vocabulary.word(6), "sat");
  EXPECT_THROW(vocabulary.word(7), std::out_of_range);
  EXPECT_THROW(vocabulary.word(-1), std::out_of_range);
}

TEST(Vocabulary, EncodesSentencesWithBoundaryTokens) {
  const Vocabulary vocabulary = Vocabulary::from_words({"hello", "bye", "don't"});
  const int32_t s = Vocabulary::kBegin, e = Vocabulary::kEnd, unk = Vocabulary::kUnknown;
  EXPECT_EQ(vocabulary.encode_text("Hello world. Bye!"),
            (std::vector<int32_t>{s, 4, unk, e, s, 5, e}));
  const Unit unit{"u", {"Don't!", "", "bye bye"}};
  EXPECT_EQ(vocabulary.encode(unit), (std::vector<int32_t>{s, 6, e, s, 5, 5, e}));
  const Vocabulary::Coverage coverage = vocabulary.coverage({unit, unit_of("hello world")});
  EXPECT_EQ(coverage.tokens, 5u);
  EXPECT_EQ(coverage.unknown, 1u);
  EXPECT_DOUBLE_EQ(coverage.oov_rate(), 0.2);
}

TEST(Vocabulary, SaveLoadRoundTrips) {
  const Vocabulary vocabulary = Vocabulary::from_words({"zebra", "apple", "caf\u00e9", "o'clock"});
  const std::string path = scratch_file("vocab.txt");
  vocabulary.save(path);
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first, Vocabulary::kHeader);
  const Vocabulary loaded = Vocabulary::load(path);
  EXPECT_EQ(loaded.words(), vocabulary.words());
  EXPECT_EQ(loaded.id("apple"), vocabulary.id("apple"));
}

TEST(Vocabulary, LoadsAUserWordList) {
  const Vocabulary vocabulary = Vocabulary::load(write("user.txt", "Apple\r\nbanana\n\n APPLE \n"));
  EXPECT_EQ(vocabulary.words(),
            (std::vector<std::string>{"<pad>", "<unk>", "<s>", "</s>", "apple", "banana"}));
}

TEST(Vocabulary, BadFilesGiveClearErrors) {
  EXPECT_NE(error_of([] { Vocabulary::load("/nonexistent/vocab.txt"); }).find("cannot open"),
            std::string::npos);
  const std::string two_words = write("two.txt", "fine\nice cream\n");
  EXPECT_NE(error_of([&] { Vocabulary::load(two_words); }).find(":2: 'ice cream' is not a single"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              Vocabulary::load(write("utf8.txt", "ok\nbad\xff\n"));
            }).find("invalid UTF-8 at byte 6"),
            std::string::npos);
  EXPECT_NE(error_of([&] { Vocabulary::load(write("empty.txt", "\n\n")); }).find("no words"),
            std::string::npos);
  const std::string header = std::string(Vocabulary::kHeader) + "\n";
  EXPECT_NE(error_of([&] {
              Vocabulary::load(write("specials.txt", header + "<pad>\n<s>\n"));
            }).find("truncated"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              Vocabulary::load(write("order.txt", header + "<pad>\n<s>\n<unk>\n</s>\n"));
            }).find(":3: expected special token <unk>"),
            std::string::npos);
  const std::string specials = header + "<pad>\n<unk>\n<s>\n</s>\n";
  EXPECT_NE(error_of([&] {
              Vocabulary::load(write("dup.txt", specials + "a\nb\na\n"));
            }).find(":8: duplicate word 'a'"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              Vocabulary::load(write("upper.txt", specials + "Apple\n"));
            }).find("not a normalized word"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              Vocabulary::load(write("version.txt", "#blur-vocabulary v2\n<pad>\n"));
            }).find("unsupported header"),
            std::string::npos);
}

// --- the public word list -------------------------------------------------------

TEST(PublicWordList, NormalizesAndDeduplicates) {
  const PublicWordList list =
      PublicWordList::from_words({"Apple", "apple", "A's", "ice cream", ""});
  EXPECT_EQ(list.words(), (std::vector<std::string>{"a's", "apple"}));
  EXPECT_EQ(list.rejected(), 1u);
  EXPECT_EQ(list.index("apple"), 1);
  EXPECT_EQ(list.index("pear"), -1);
}

TEST(PublicWordList, LoadsWamerican) {
  const PublicWordList& list = wamerican();
  std::printf("wamerican: %zu words after lower-casing and deduplication\n", list.size());
  EXPECT_GT(list.size(), 90000u);  // 102,485 on Debian 12 (104,334 lines)
  EXPECT_TRUE(list.contains("the"));
  EXPECT_TRUE(list.contains("america's"));
  EXPECT_TRUE(list.contains("\u00e9clair"));
  EXPECT_FALSE(list.contains("America"));
  EXPECT_THROW(PublicWordList::load("/nonexistent/words"), VocabularyError);
}

// --- contribution bounding ----------------------------------------------------------

TEST(DpVocabulary, EachUnitContributesAtMostKDistinctCandidates) {
  const PublicWordList list =
      PublicWordList::from_words({"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"});
  // "x" and "y" are not candidates and use up no slot; repeats count once.
  const std::vector<Unit> units = {Unit{"u1", {"x a a b", "y a c d e f"}}, unit_of("j i h g"),
                                   unit_of("b")};
  uint64_t contributions = 0;
  const std::vector<uint64_t> counts = bounded_counts(units, list, 3, Tokenizer(), &contributions);
  //                                       a  b  c  d  e  f  g  h  i  j
  EXPECT_EQ(counts, (std::vector<uint64_t>{1, 2, 1, 0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(contributions, 7u);
  const std::vector<uint64_t> k1 = bounded_counts(units, list, 1);
  EXPECT_EQ(k1, (std::vector<uint64_t>{1, 1, 0, 0, 0, 0, 0, 0, 0, 1}));
  // Whatever a unit writes, its contribution is <= k in every coordinate sum.
  std::string long_text;
  for (const std::string& word : wamerican().words()) long_text += word + " ";
  uint64_t one_unit = 0;
  bounded_counts({unit_of(long_text)}, wamerican(), 16, Tokenizer(), &one_unit);
  EXPECT_EQ(one_unit, 16u);
}

// --- the mechanism --------------------------------------------------------------------

// 50 candidate words, word i in 3 (i + 1) units: all counts distinct.
std::vector<Unit> graded_units(const std::vector<std::string>& words) {
  std::vector<Unit> units;
  for (size_t i = 0; i < words.size(); ++i) {
    for (size_t n = 0; n < 3 * (i + 1); ++n) units.push_back(unit_of(words[i]));
  }
  return units;
}

TEST(DpVocabulary, WithLargeEpsilonItIsTheTrueTopV) {
  std::vector<std::string> words;
  for (size_t i = 0; i < 50; ++i) words.push_back(wamerican().words()[1000 + 37 * i]);
  std::vector<Unit> units = graded_units(words);
  units.push_back(unit_of("zzyzx qwfp"));  // not public: ignored
  DpVocabularyConfig config;
  config.max_size = Vocabulary::kSpecialCount + 20;
  config.noise_multiplier = 1e-6;  // epsilon in the millions
  // A zero count passes a t-sd threshold with probability Q(t); over the
  // ~100,000 public words, t = 6.5 makes a noise word a 4e-6 event (at the
  // default 4.5 it would be one run in three).
  config.threshold_stddevs = 6.5;
  const GaussianNoise noise(TrainSeed::from_u64(1), "vocabulary", 0);
  const DpVocabulary result = build_dp_vocabulary(units, wamerican(), config, noise);
  std::vector<std::string> expected = {"<pad>", "<unk>", "<s>", "</s>"};
  for (size_t i = 49; i >= 30; --i) expected.push_back(words[i]);  // most frequent first
  EXPECT_EQ(result.vocabulary.words(), expected);
  EXPECT_EQ(result.report.candidates, wamerican().size());
  EXPECT_EQ(result.report.units, units.size());
  EXPECT_EQ(result.report.contributions, units.size() - 1);
  EXPECT_EQ(result.report.above_threshold, 50u);  // every positive count, no noise word
}

TEST(DpVocabulary, WordsOutsideThePublicListNeverEnter) {
  std::vector<Unit> units;
  for (int i = 0; i < 5000; ++i) units.push_back(unit_of("Blurzle the xkcdish cat blurzle"));
  for (double sigma : {1e-6, 3.0}) {
    DpVocabularyConfig config;
    config.noise_multiplier = sigma;
    config.threshold_stddevs = kNoThreshold;  // even top-V of all candidates
    config.max_size = 5000;
    const GaussianNoise noise(TrainSeed::from_u64(2), "vocabulary", 0);
    const Vocabulary vocabulary = build_dp_vocabulary(units, wamerican(), config, noise).vocabulary;
    EXPECT_EQ(vocabulary.size(), 5000u);
    EXPECT_FALSE(vocabulary.contains("blurzle"));
    EXPECT_FALSE(vocabulary.contains("xkcdish"));
    EXPECT_TRUE(vocabulary.contains("the"));
    EXPECT_TRUE(vocabulary.contains("cat"));
    for (size_t id = Vocabulary::kSpecialCount; id < vocabulary.size(); ++id) {
      ASSERT_TRUE(wamerican().contains(vocabulary.words()[id]));
    }
  }
}

// At the defaults (sigma 3, k 16: stddev 12, threshold 4.5 stddev = 54) a
// word of true count 1 passes with probability Q(4.5 - 1/12) = 5.0e-6 per
// build; over the 100 seeded builds below the chance of any false alarm is
// 5.0e-4 (and 0 for these fixed seeds). Each build also admits a count-0
// public word with probability Q(4.5) = 3.4e-6 each (0.35 of 102,485 words
// expected): the rule below tolerates those, but never the rare word.
TEST(DpVocabulary, ARareWordIsExcludedAtTheDefaultSigma) {
  std::vector<Unit> units;
  for (int i = 0; i < 2000; ++i) units.push_back(unit_of("The cat sat on the mat."));
  units.push_back(unit_of("An aardvark, once."));
  const DpVocabularyConfig config;  // the defaults
  EXPECT_EQ(config.noise_multiplier, 3.0);
  EXPECT_EQ(config.max_words_per_unit, 16u);
  EXPECT_EQ(config.threshold_stddevs, 4.5);
  size_t noise_words = 0;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    const GaussianNoise noise(TrainSeed::from_u64(seed), "vocabulary", 0);
    const DpVocabulary result = build_dp_vocabulary(units, wamerican(), config, noise);
    EXPECT_DOUBLE_EQ(result.report.noise_stddev, 12.0);
    EXPECT_DOUBLE_EQ(result.report.min_noisy_count, 54.0);
    ASSERT_FALSE(result.vocabulary.contains("aardvark")) << "seed " << seed;
    ASSERT_FALSE(result.vocabulary.contains("once")) << "seed " << seed;
    for (const char* word : {"the", "cat", "sat", "on", "mat"}) {
      ASSERT_TRUE(result.vocabulary.contains(word)) << word;
    }
    noise_words += result.vocabulary.size() - Vocabulary::kSpecialCount - 5;
  }
  // 35 expected over the 100 builds (Poisson: P(> 70) < 1e-7).
  std::printf("count-0 words admitted in 100 builds: %zu (35 expected)\n", noise_words);
  EXPECT_LT(noise_words, 70u);
}

TEST(DpVocabulary, ReportsTheGaussianPhaseForTheAccountant) {
  DpVocabularyConfig config;
  config.noise_multiplier = 2.5;
  config.max_words_per_unit = 9;
  const GaussianNoise noise(TrainSeed::from_u64(3), "vocabulary", 0);
  const DpVocabulary result = build_dp_vocabulary({unit_of("the cat")}, wamerican(), config, noise);
  EXPECT_EQ(result.report.phase.noise_multiplier, 2.5);
  EXPECT_EQ(result.report.phase.sample_rate, 1.0);
  EXPECT_EQ(result.report.phase.steps, 1);
  EXPECT_DOUBLE_EQ(result.report.noise_stddev, 7.5);  // sigma * sqrt(k)
}

TEST(DpVocabulary, RejectsBadConfigurations) {
  const GaussianNoise noise(TrainSeed::from_u64(4), "vocabulary", 0);
  const std::vector<Unit> units = {unit_of("the cat")};
  for (int bad = 0; bad < 5; ++bad) {
    DpVocabularyConfig config;
    if (bad == 0) config.max_size = 4;
    if (bad == 1) config.max_words_per_unit = 0;
    if (bad == 2) config.noise_multiplier = 0;
    if (bad == 3) config.noise_multiplier = std::numeric_limits<double>::infinity();
    if (bad == 4) config.threshold_stddevs = std::nan("");
    EXPECT_THROW(build_dp_vocabulary(units, wamerican(), config, noise), VocabularyError) << bad;
  }
}

// --- the noise --------------------------------------------------------------------------

// 200,000 draws at stddev sigma * sqrt(k) = 12 (fixed seed). The sample
// stddev's relative standard error is 1/sqrt(2n) = 0.16%: tolerance 1%
// (6 standard errors). The mean's standard error is 0.027: tolerance 0.15.
// Shape: P(|z| < 1) = 0.6827 (se 0.001, tolerance 0.005), P(|z| > 3) =
// 0.0027 (se 0.00012, tolerance 0.0007).
// The trainer's vocabulary noise: counts on the grid 1/D plus exact
// discrete Gaussian integers, D = floor(2^20 / (sigma sqrt k)) = 87381 at
// sigma 3, k 16: each score times D is an integer, minus D c it is exactly
// the stream's draw, and the effective multiplier 2^20 / (D sqrt k) is
// >= sigma (by less than 1e-5 relative here).
TEST(VocabularyNoise, DiscreteNoiseIsIntegersOnTheGrid) {
  const std::vector<uint64_t> counts = {0, 1, 7, 1000, 3};
  const DiscreteGaussianNoise noise(TrainSeed::from_u64(6), "vocabulary", 0);
  double effective = 0;
  const std::vector<double> noisy = add_discrete_gaussian_noise(counts, 3.0, 16, noise, &effective);
  std::vector<int64_t> z(counts.size());
  DiscreteGaussianNoise(TrainSeed::from_u64(6), "vocabulary", 0).sample(z.data(), z.size(), 20, 1);
  const double scale = std::floor(1048576.0 / 12.0);
  EXPECT_EQ(scale, 87381.0);
  for (size_t i = 0; i < counts.size(); ++i) {
    EXPECT_EQ(noisy[i] * scale, static_cast<double>(counts[i]) * scale + static_cast<double>(z[i]));
  }
  EXPECT_GE(effective, 3.0);
  EXPECT_LT(effective, 3.0 * (1 + 1e-5));
  // The mechanism with it: same validation, the report carries sigma_eff.
  DpVocabularyConfig config;
  config.max_size = 10;
  const DpVocabulary result = build_dp_vocabulary({unit_of("the cat")}, wamerican(), config, noise);
  EXPECT_EQ(result.report.phase.noise_multiplier, effective);
}

TEST(VocabularyNoise, EmpiricalStddevIsSigmaTimesSqrtK) {
  const double stddev = 3.0 * std::sqrt(16.0);
  const size_t n = 200000;
  const GaussianNoise noise(TrainSeed::from_u64(5), "vocabulary", 0);
  const std::vector<double> noisy = add_gaussian_noise(std::vector<uint64_t>(n, 7), stddev, noise);
  double sum = 0, sum_squares = 0;
  size_t within_one = 0, beyond_three = 0;
  for (double x : noisy) {
    const double z = (x - 7) / stddev;
    sum += x - 7;
    sum_squares += (x - 7) * (x - 7);
    within_one += std::fabs(z) < 1;
    beyond_three += std::fabs(z) > 3;
  }
  const double mean = sum / n;
  const double sample_stddev = std::sqrt(sum_squares / n - mean * mean);
  std::printf("noise: mean %.4f stddev %.4f (expected 0, %.4f)\n", mean, sample_stddev, stddev);
  EXPECT_NEAR(mean, 0.0, 0.15);
  EXPECT_NEAR(sample_stddev / stddev, 1.0, 0.01);
  EXPECT_NEAR(within_one / double(n), 0.6827, 0.005);
  EXPECT_NEAR(beyond_three / double(n), 0.0027, 0.0007);
}

TEST(VocabularyNoise, SeededStreamsAreReproducibleAndOsStreamsDiffer) {
  const GaussianNoise a(TrainSeed::from_u64(42), "vocabulary", 0);
  const GaussianNoise b(TrainSeed::from_u64(42), "vocabulary", 0);
  const GaussianNoise c(TrainSeed::from_u64(43), "vocabulary", 0);
  bool differs = false;
  for (uint64_t i = 0; i < 100; ++i) {
    const double x = a.normal(i);
    EXPECT_EQ(x, b.normal(i));
    differs |= x != c.normal(i);
  }
  EXPECT_TRUE(differs);
  DrbgStream os1(TrainSeed::from_os_entropy(), "vocabulary", 0);
  DrbgStream os2(TrainSeed::from_os_entropy(), "vocabulary", 0);
  EXPECT_NE(os1.next_u64(), os2.next_u64());
  for (int i = 0; i < 1000; ++i) {
    const double u = os1.uniform53();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

// --- the default corpus: measured coverage --------------------------------------------

TEST(DpVocabulary, DefaultCorpusCoverage) {
  const SplitCorpus split = split_corpus(read_default_corpus());
  std::printf("%-28s %7s %9s %9s\n", "vocabulary (fixed seed 2024)", "size", "test OOV", "val OOV");
  double previous_oov = 1.0;
  for (const bool threshold : {true, false}) {
    for (const size_t v : {5000, 8000, 10000}) {
      DpVocabularyConfig config;
      config.max_size = v;
      if (!threshold) config.threshold_stddevs = kNoThreshold;
      const GaussianNoise noise(TrainSeed::from_u64(2024), "vocabulary", 0);
      const DpVocabulary result = build_dp_vocabulary(split.train, wamerican(), config, noise);
      const double oov = result.vocabulary.coverage(split.test).oov_rate();
      std::printf("DP V=%-5zu %-17s %7zu %9.4f %9.4f\n", v,
                  threshold ? "threshold 4.5sd" : "top-V only", result.vocabulary.size(), oov,
                  result.vocabulary.coverage(split.validation).oov_rate());
      if (threshold) {
        // The threshold binds long before V: ~350 words pass.
        EXPECT_LT(result.vocabulary.size(), 1000u);
        EXPECT_GT(result.vocabulary.size(), 200u);
        EXPECT_LT(oov, 0.5);
      } else {
        EXPECT_EQ(result.vocabulary.size(), v);
        EXPECT_LE(oov, previous_oov);
        previous_oov = oov;
      }
    }
  }
  // Reference, not private: the V most frequent public words of the training split.
  std::vector<double> frequency(wamerican().size(), 0);
  const Tokenizer tokenizer;
  for (const Unit& unit : split.train) {
    for (const std::string& text : unit.texts) {
      for (const std::string& word : tokenizer.words(text)) {
        const int64_t index = wamerican().index(word);
        if (index >= 0) frequency[static_cast<size_t>(index)] += 1;
      }
    }
  }
  for (const size_t v : {5000, 8000, 10000}) {
    const Vocabulary vocabulary = top_words(wamerican(), frequency, v, 0.5);
    std::printf("non-private top-%-5zu         %7zu %9.4f %9.4f\n", v, vocabulary.size(),
                vocabulary.coverage(split.test).oov_rate(),
                vocabulary.coverage(split.validation).oov_rate());
  }
}

}  // namespace
