#include "trainer/data/corpus.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "scratch_files.h"
#include "trainer/data/tokenizer.h"

namespace {

using namespace blur::trainer;
using blur::test::scratch_dir;
using blur::test::write_file;
namespace fs = std::filesystem;

// The message of the CorpusError `f` throws ("" if it does not throw).
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const CorpusError& e) {
    return e.what();
  }
  return "";
}

TEST(Corpus, ParsesFortuneFiles) {
  const std::string dir = scratch_dir();
  const std::string path = write_file(dir, "f",
                                 "First fortune.\n%\nSecond line one\n\tline two\n%\r\n\n  \n%\n"
                                 "Third, with 100% and\n%% in it\n");
  const Corpus corpus = read_corpus(path, CorpusFormat::kFortune);
  ASSERT_EQ(corpus.units.size(), 3u);
  EXPECT_EQ(corpus.units[0].texts, std::vector<std::string>{"First fortune."});
  EXPECT_EQ(corpus.units[1].texts, std::vector<std::string>{"Second line one\n\tline two"});
  EXPECT_EQ(corpus.units[2].texts, std::vector<std::string>{"Third, with 100% and\n%% in it"});
  EXPECT_EQ(corpus.units[1].key, corpus.units[1].texts[0]);
  // auto detects the format from the `%` lines.
  EXPECT_EQ(read_corpus(path).units.size(), 3u);
  EXPECT_EQ(corpus.files, std::vector<std::string>{path});
}

TEST(Corpus, ReadsOneExamplePerLine) {
  const std::string dir = scratch_dir();
  const std::string path = write_file(dir, "l", "one example\r\n\n   \nanother\tone\nlast");
  const Corpus corpus = read_corpus(path);  // auto: a line without a tab -> lines
  ASSERT_EQ(corpus.units.size(), 3u);
  EXPECT_EQ(corpus.units[0].texts, std::vector<std::string>{"one example"});
  EXPECT_EQ(corpus.units[1].texts, std::vector<std::string>{"another\tone"});
  EXPECT_EQ(corpus.units[2].key, "last");
}

TEST(Corpus, GroupsUserTabLinesByUserAcrossFiles) {
  const std::string dir = scratch_dir();
  const std::string a = write_file(dir, "a", "u1\thello there\nu2\tbye\n\nu1\tagain\nu3\t  \n");
  const std::string b = write_file(dir, "b", "u2\tsecond file\nu1\tthird\n");
  const Corpus corpus = read_corpus_files({a, b});  // auto: every line has an id and a tab
  ASSERT_EQ(corpus.units.size(), 2u);               // u3 has only a blank text
  EXPECT_EQ(corpus.units[0].key, "u1");
  EXPECT_EQ(corpus.units[0].texts, (std::vector<std::string>{"hello there", "again", "third"}));
  EXPECT_EQ(corpus.units[1].key, "u2");
  EXPECT_EQ(corpus.units[1].texts, (std::vector<std::string>{"bye", "second file"}));
}

TEST(Corpus, UserTabLineWithoutAnIdIsAnError) {
  const std::string dir = scratch_dir();
  const std::string path = write_file(dir, "u", "u1\tfine\nno tab here\n");
  const std::string message = error_of([&] { read_corpus(path, CorpusFormat::kUserTab); });
  EXPECT_NE(message.find(path + ":2: expected user_id<TAB>text"), std::string::npos) << message;
  const std::string empty_id = write_file(dir, "e", "\tno id\n");
  EXPECT_NE(error_of([&] { read_corpus(empty_id, CorpusFormat::kUserTab); }).find("empty user id"),
            std::string::npos);
  // auto falls back to lines when a line has no id.
  EXPECT_EQ(read_corpus(path).units.size(), 2u);
}

TEST(Corpus, DirectoryReadsEachFileOnceAndSkipsIndexes) {
  const std::string dir = scratch_dir();
  write_file(dir, "b", "bee\n%\nbuzz\n");
  write_file(dir, "a", "ant\n%\n");
  write_file(dir, "a.dat", std::string("\x00\x00\x00\x02\xff", 5));
  fs::create_symlink(dir + "/a", dir + "/a.u8");
  fs::create_hard_link(dir + "/b", dir + "/c");
  const Corpus corpus = read_corpus(dir);
  EXPECT_EQ(corpus.files, (std::vector<std::string>{dir + "/a", dir + "/b"}));
  ASSERT_EQ(corpus.units.size(), 3u);
  EXPECT_EQ(corpus.units[0].texts[0], "ant");
}

TEST(Corpus, BadInputGivesClearErrors) {
  const std::string dir = scratch_dir();
  EXPECT_NE(error_of([&] { read_corpus(dir + "/missing"); }).find("no such file"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_corpus_files({dir + "/missing"}); }).find("missing"),
            std::string::npos);
  const std::string empty = write_file(dir, "empty", "");
  EXPECT_NE(error_of([&] { read_corpus(empty); }).find("no examples"), std::string::npos);
  const std::string blank = write_file(dir, "blank", "\n  \n%\n%\n");
  EXPECT_NE(error_of([&] { read_corpus(blank); }).find("no examples"), std::string::npos);
  const std::string empty_dir = dir + "/sub";
  fs::create_directories(empty_dir);
  EXPECT_NE(error_of([&] { read_corpus(empty_dir); }).find("no text files"), std::string::npos);

  const std::string bad = write_file(dir, "bad", "fine line\nbad \xc3\x28 byte\n");
  const std::string message = error_of([&] { read_corpus(bad); });
  EXPECT_NE(message.find(bad + ":2: invalid UTF-8 at byte 14"), std::string::npos) << message;
  // Repair on request: the bad byte becomes U+FFFD, a separator.
  const Corpus repaired = read_corpus(bad, CorpusFormat::kLines, InvalidUtf8::kReplace);
  ASSERT_EQ(repaired.units.size(), 2u);
  EXPECT_EQ(repaired.units[1].texts[0], "bad \xef\xbf\xbd( byte");
  EXPECT_EQ(Tokenizer().words(repaired.units[1].texts[0]),
            (std::vector<std::string>{"bad", "byte"}));

  EXPECT_NE(error_of([] { parse_corpus_format("csv"); }).find("unknown corpus format"),
            std::string::npos);
  EXPECT_EQ(parse_corpus_format("user_tab"), CorpusFormat::kUserTab);
  EXPECT_STREQ(corpus_format_name(CorpusFormat::kFortune), "fortune");
}

TEST(Corpus, ByteOrderMarkIsDropped) {
  const std::string dir = scratch_dir();
  const std::string path = write_file(dir, "bom", "\xEF\xBB\xBFu1\thi\n");
  const Corpus corpus = read_corpus(path);
  ASSERT_EQ(corpus.units.size(), 1u);
  EXPECT_EQ(corpus.units[0].key, "u1");
}

// --- the split ----------------------------------------------------------------

// Known answers: bucket = SHA-256("blur-split-v1" 0x00 key)[0..8) big-endian
// mod 100 (checked independently with Python's hashlib): alice 17, frank 90,
// judy 96, user-17 81.
TEST(Split, KnownAnswers) {
  EXPECT_EQ(split_of("alice"), Split::kTrain);
  EXPECT_EQ(split_of("frank"), Split::kTest);
  EXPECT_EQ(split_of("judy"), Split::kTest);
  EXPECT_EQ(split_of("user-17"), Split::kValidation);
  SplitConfig all_test;
  all_test.validation_percent = 0;
  all_test.test_percent = 100;
  EXPECT_EQ(split_of("alice", all_test), Split::kTest);
  SplitConfig bad;
  bad.validation_percent = 60;
  bad.test_percent = 50;
  EXPECT_THROW(split_of("alice", bad), CorpusError);
  EXPECT_STREQ(split_name(Split::kValidation), "validation");
}

TEST(Split, ProportionsAreEightyTenTen) {
  const int n = 20000;
  int counts[3] = {0, 0, 0};
  for (int i = 0; i < n; ++i) ++counts[static_cast<int>(split_of("key " + std::to_string(i)))];
  // Binomial standard deviations: 0.0028 (train), 0.0021 (validation, test);
  // the tolerances are > 4 of them. The keys are fixed, so the outcome is too.
  EXPECT_NEAR(counts[0] / double(n), 0.8, 0.012);
  EXPECT_NEAR(counts[1] / double(n), 0.1, 0.009);
  EXPECT_NEAR(counts[2] / double(n), 0.1, 0.009);
}

TEST(Split, UsersNeverSpanSplitsAndTheSplitIsDeterministic) {
  const std::string dir = scratch_dir();
  std::string text;
  for (int line = 0; line < 40; ++line) {
    for (int user = 0; user < 50; ++user) {
      text += "user" + std::to_string(user) + "\tline " + std::to_string(line) + "\n";
    }
  }
  const Corpus corpus = read_corpus(write_file(dir, "users", text));
  ASSERT_EQ(corpus.units.size(), 50u);
  const SplitCorpus split = split_corpus(corpus);
  EXPECT_EQ(split.train.size() + split.validation.size() + split.test.size(), 50u);
  std::set<std::string> seen;
  for (const auto* part : {&split.train, &split.validation, &split.test}) {
    for (const Unit& unit : *part) {
      EXPECT_TRUE(seen.insert(unit.key).second) << unit.key << " in two splits";
      EXPECT_EQ(unit.texts.size(), 40u);  // all of the user's lines, together
    }
  }
  const SplitCorpus again = split_corpus(read_corpus(dir + "/users"));
  ASSERT_EQ(again.test.size(), split.test.size());
  for (size_t i = 0; i < split.test.size(); ++i) EXPECT_EQ(again.test[i].key, split.test[i].key);
  // Another salt is another split.
  SplitConfig salted;
  salted.salt = "another";
  int moved = 0;
  for (const Unit& unit : corpus.units) moved += split_of(unit.key) != split_of(unit.key, salted);
  EXPECT_GT(moved, 0);
}

// --- the default corpus -------------------------------------------------------

TEST(DefaultCorpus, IsTheFortunesPackagesPlainTextFiles) {
  const std::vector<std::string> files = default_corpus_files();
  ASSERT_EQ(files.size(), 43u);  // 40 (fortunes) + 3 (fortunes-min)
  for (const std::string& file : files) {
    ASSERT_TRUE(fs::is_regular_file(fs::symlink_status(file)))
        << file << " missing or a symlink: install Debian's fortunes and fortunes-min";
  }
  // Reading the whole directory finds them once each: no .u8 names, no .dat.
  const Corpus directory = read_corpus("/usr/share/games/fortunes");
  for (const std::string& file : directory.files) {
    EXPECT_NE(file.substr(file.size() - 3), ".u8");
    EXPECT_NE(file.substr(file.size() - 4), ".dat");
  }
  for (const std::string& file : files) {
    EXPECT_NE(std::find(directory.files.begin(), directory.files.end(), file),
              directory.files.end());
  }
}

TEST(DefaultCorpus, WordCountAndSplit) {
  const Corpus corpus = read_default_corpus();
  const Tokenizer tokenizer;
  uint64_t words = 0;
  uint64_t sentences = 0;
  for (const Unit& unit : corpus.units) {
    for (const std::string& text : unit.texts) {
      for (const Sentence& sentence : tokenizer.sentences(text)) {
        ++sentences;
        words += sentence.size();
      }
    }
  }
  const SplitCorpus split = split_corpus(corpus);
  std::printf(
      "default corpus: %zu files, %zu units, %llu sentences, %llu words; "
      "split %zu / %zu / %zu\n",
      corpus.files.size(), corpus.units.size(), static_cast<unsigned long long>(sentences),
      static_cast<unsigned long long>(words), split.train.size(), split.validation.size(),
      split.test.size());
  // Measured on Debian 12 (fortunes 1:1.99.1-7.3): 15,217 entries, 436,820
  // words, 39,513 sentences.
  EXPECT_GT(corpus.units.size(), 14000u);
  EXPECT_LT(corpus.units.size(), 16500u);
  EXPECT_GT(words, 400000u);
  EXPECT_LT(words, 480000u);
  const double n = static_cast<double>(corpus.units.size());
  EXPECT_NEAR(split.train.size() / n, 0.8, 0.02);
  EXPECT_NEAR(split.validation.size() / n, 0.1, 0.015);
  EXPECT_NEAR(split.test.size() / n, 0.1, 0.015);
  // An entry that occurs twice (the same text in two files) is in one split.
  std::set<std::string> train_keys;
  for (const Unit& unit : split.train) train_keys.insert(unit.key);
  for (const auto* part : {&split.validation, &split.test}) {
    for (const Unit& unit : *part) EXPECT_EQ(train_keys.count(unit.key), 0u);
  }
}

}  // namespace
