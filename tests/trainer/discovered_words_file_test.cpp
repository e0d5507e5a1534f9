// The discovered-words file between blur-collector (writes) and
// blur-trainer (reads): what is written reads back the same, and what is
// not that format is refused, naming the file and line.
#include "common/discovered_words_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "scratch_files.h"

namespace {

using namespace blur::common;
using blur::test::scratch_file;
namespace fs = std::filesystem;

std::string write_bytes(const std::string& name, const std::string& bytes) {
  return blur::test::write_file(blur::test::scratch_dir(), name, bytes);
}

std::string read_bytes(const std::string& path) {
  std::ostringstream text;
  text << std::ifstream(path, std::ios::binary).rdbuf();
  return text.str();
}

// The read's error, or "" when it succeeds.
std::string read_error(const std::string& path) {
  DiscoveredWords found;
  std::string error;
  return read_discovered_words(path, &found, &error) ? "" : error;
}

TEST(DiscoveredWordsFile, RoundTripsWordsInOrderAndTheSource) {
  const DiscoveredWords words{
      {"the", "a", "don't", "café"},
      "word-discovery metric 2 (pem, epsilon 4 per report over 20000 reports)"};
  const std::string path = scratch_file("words.txt");
  std::string error;
  ASSERT_TRUE(write_discovered_words(path, words, &error)) << error;
  EXPECT_EQ(read_bytes(path),
            "#blur-discovered-words v1\n"
            "#source word-discovery metric 2 (pem, epsilon 4 per report over 20000 reports)\n"
            "the\na\ndon't\ncafé\n");
  DiscoveredWords read;
  ASSERT_TRUE(read_discovered_words(path, &read, &error)) << error;
  EXPECT_EQ(read.words, words.words);
  EXPECT_EQ(read.source, words.source);
}

TEST(DiscoveredWordsFile, NoWordsIsAFileToo) {
  const std::string path = scratch_file("none.txt");
  std::string error;
  ASSERT_TRUE(write_discovered_words(path, {{}, "metric 7"}, &error)) << error;
  DiscoveredWords read{{"stale"}, "stale"};
  ASSERT_TRUE(read_discovered_words(path, &read, &error)) << error;
  EXPECT_TRUE(read.words.empty());
  EXPECT_EQ(read.source, "metric 7");
}

TEST(DiscoveredWordsFile, WriteRefusesWhatCannotBeOneLine) {
  const std::string path = scratch_file("bad.txt");
  std::string error;
  EXPECT_FALSE(write_discovered_words(path, {{"a", ""}, "s"}, &error));
  EXPECT_NE(error.find("empty"), std::string::npos) << error;
  EXPECT_FALSE(write_discovered_words(path, {{"a\nb"}, "s"}, &error));
  EXPECT_FALSE(write_discovered_words(path, {{"a"}, "two\nlines"}, &error));
  EXPECT_FALSE(write_discovered_words(path, {{"a", "b", "a"}, "s"}, &error));
  EXPECT_NE(error.find("'a' repeats"), std::string::npos) << error;
  EXPECT_FALSE(fs::exists(path));  // nothing written
  EXPECT_FALSE(write_discovered_words(scratch_file("no/such/dir.txt"), {{"a"}, "s"}, &error));
  EXPECT_NE(error.find("cannot write"), std::string::npos) << error;
}

TEST(DiscoveredWordsFile, FormatAndParseAreInverses) {
  const DiscoveredWords words{{"x", "y"}, "metric 3"};
  std::string text, error;
  ASSERT_TRUE(format_discovered_words(words, &text, &error)) << error;
  DiscoveredWords parsed;
  ASSERT_TRUE(parse_discovered_words(text, "t", &parsed, &error)) << error;
  EXPECT_EQ(parsed.words, words.words);
  EXPECT_EQ(parsed.source, words.source);
  // A last line without its '\n' is still a word.
  ASSERT_TRUE(parse_discovered_words(text + "z", "t", &parsed, &error)) << error;
  EXPECT_EQ(parsed.words, (std::vector<std::string>{"x", "y", "z"}));
}

TEST(DiscoveredWordsFile, ReadRefusesOtherFilesNamingFileAndLine) {
  EXPECT_NE(read_error(scratch_file("missing.txt")).find("cannot read"), std::string::npos);
  // A plain word list, the trainer's saved vocabulary, a header without source.
  for (const std::string& bytes :
       {std::string("the\na\n"), std::string("#blur-vocabulary v1\n<pad>\n"),
        std::string("#blur-discovered-words v1\nthe\n"), std::string(""),
        std::string("#blur-discovered-words v2\n#source s\nthe\n")}) {
    const std::string path = write_bytes("other.txt", bytes);
    EXPECT_NE(read_error(path).find("is not a discovered-words file"), std::string::npos) << bytes;
  }
  const std::string header = "#blur-discovered-words v1\n#source s\n";
  const std::string empty = write_bytes("empty.txt", header + "the\n\na\n");
  EXPECT_EQ(read_error(empty), empty + ":4: an empty word, or a carriage return in one");
  const std::string crlf = write_bytes("crlf.txt", header + "the\r\n");
  EXPECT_EQ(read_error(crlf), crlf + ":3: an empty word, or a carriage return in one");
  const std::string source_cr =
      write_bytes("source.txt", "#blur-discovered-words v1\r\n#source s\r\nthe\r\n");
  EXPECT_NE(read_error(source_cr).find("is not a discovered-words file"), std::string::npos);
  const std::string source_cr2 =
      write_bytes("source2.txt", "#blur-discovered-words v1\n#source s\r\n");
  EXPECT_EQ(read_error(source_cr2), source_cr2 + ":2: a carriage return in the source");
  const std::string repeated = write_bytes("repeated.txt", header + "the\na\nthe\n");
  EXPECT_EQ(read_error(repeated), repeated + ":5: 'the' repeats");
}

}  // namespace
