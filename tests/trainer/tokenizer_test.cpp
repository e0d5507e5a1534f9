#include "trainer/data/tokenizer.h"

#include <gtest/gtest.h>

#include <random>

namespace {

using blur::trainer::is_valid_utf8;
using blur::trainer::Sentence;
using blur::trainer::Tokenizer;

using Sentences = std::vector<Sentence>;

Sentences sentences(std::string_view text) { return Tokenizer().sentences(text); }
std::vector<std::string> words(std::string_view text) { return Tokenizer().words(text); }

TEST(Tokenizer, LowerCasesWordsAndSplitsSentences) {
  EXPECT_EQ(sentences("Don't panic! It's 5 O'Clock."),
            (Sentences{{"don't", "panic"}, {"it's", "5", "o'clock"}}));
}

TEST(Tokenizer, DropsPunctuationAndSplitsHyphens) {
  EXPECT_EQ(words("Hello, world -- a well-known \"quote\" (in parens); [x] {y} <z> a/b @c #d"),
            (std::vector<std::string>{"hello", "world", "a", "well", "known", "quote", "in",
                                      "parens", "x", "y", "z", "a", "b", "c", "d"}));
}

TEST(Tokenizer, KeepsApostrophesOnlyInsideWords) {
  EXPECT_EQ(
      words("'Tis the dogs' toys, 'quoted' rock 'n' roll"),
      (std::vector<std::string>{"tis", "the", "dogs", "toys", "quoted", "rock", "n", "roll"}));
  // The typographic apostrophe U+2019 becomes ASCII.
  EXPECT_EQ(words("Don\u2019t"), (std::vector<std::string>{"don't"}));
  EXPECT_EQ(words("it''s"), (std::vector<std::string>{"it", "s"}));
}

TEST(Tokenizer, SentenceEndsNeedSpaceAfterAndSkipAbbreviationsAndInitials) {
  EXPECT_EQ(sentences("Mr. Smith met J. R. R. Tolkien. Then he left."),
            (Sentences{{"mr", "smith", "met", "j", "r", "r", "tolkien"}, {"then", "he", "left"}}));
  EXPECT_EQ(sentences("Pi is 3.14 today, e.g. now. Fine"),
            (Sentences{{"pi", "is", "3", "14", "today", "e", "g", "now"}, {"fine"}}));
  EXPECT_EQ(sentences("What?! Really... \"Stop.\" He did. So did I."),
            (Sentences{{"what"}, {"really"}, {"stop"}, {"he", "did"}, {"so", "did", "i"}}));
  EXPECT_EQ(sentences("Wait\u2026 what"), (Sentences{{"wait"}, {"what"}}));
}

TEST(Tokenizer, BlankLineEndsASentenceButANewlineDoesNot) {
  EXPECT_EQ(
      sentences("Roses are red\nviolets are blue\n  \t\nsugar is sweet\r\n"),
      (Sentences{{"roses", "are", "red", "violets", "are", "blue"}, {"sugar", "is", "sweet"}}));
}

TEST(Tokenizer, EmptyAndPunctuationOnlyTextsHaveNoSentences) {
  EXPECT_TRUE(sentences("").empty());
  EXPECT_TRUE(sentences("  \n\n ... -- !!! ''").empty());
}

TEST(Tokenizer, NonAsciiLettersAreWordCharactersAndLowerCased) {
  EXPECT_EQ(words("\u00c5ngstr\u00f6m CAF\u00c9 na\u00efve \u0141\u00d3D\u0179 "
                  "\u0391\u0398\u0397\u039d\u0391 "
                  "\u041c\u041e\u0421\u041a\u0412\u0410 \u6771\u4eac"),
            (std::vector<std::string>{"\u00e5ngstr\u00f6m", "caf\u00e9", "na\u00efve",
                                      "\u0142\u00f3d\u017a", "\u03b1\u03b8\u03b7\u03bd\u03b1",
                                      "\u043c\u043e\u0441\u043a\u0432\u0430", "\u6771\u4eac"}));
  // Symbols, typographic quotes, dashes and emoji separate words.
  EXPECT_EQ(words("I \u2764 NY \u20ac5 \u201cyes\u201d\u2014no \U0001F600ok 2\u00d73"),
            (std::vector<std::string>{"i", "ny", "5", "yes", "no", "ok", "2", "3"}));
}

TEST(Tokenizer, OverstrikeKeepsTheLetter) {
  EXPECT_EQ(words("_\bh_\be_\bl_\bl_\bo"), (std::vector<std::string>{"hello"}));
  EXPECT_EQ(words("caf'\be b\bbo\bol\bld\bd a\b_"),
            (std::vector<std::string>{"cafe", "bold", "a"}));
  EXPECT_EQ(words("\b\bstart"), (std::vector<std::string>{"start"}));
}

TEST(Tokenizer, InvalidUtf8IsASeparatorNeverACrash) {
  EXPECT_EQ(words("abc\xff\xfe"
                  "def\xc3"),
            (std::vector<std::string>{"abc", "def"}));
  EXPECT_EQ(words("over\xc0\xaflong sur\xed\xa0\x80rogate big\xf4\x90\x80\x80"),
            (std::vector<std::string>{"over", "long", "sur", "rogate", "big"}));
  // A truncated sequence resynchronizes at the next byte.
  EXPECT_EQ(words("x\xe2\x82y"), (std::vector<std::string>{"x", "y"}));

  std::mt19937 rng(7);
  for (int round = 0; round < 5000; ++round) {
    std::string bytes(rng() % 64, '\0');
    for (char& b : bytes) {
      const unsigned r = rng() % 4;
      b = static_cast<char>(r == 0 ? 'a' + rng() % 26 : r == 1 ? " .'\n"[rng() % 4] : rng() % 256);
    }
    for (const Sentence& sentence : sentences(bytes)) {
      ASSERT_FALSE(sentence.empty());
      for (const std::string& word : sentence) {
        ASSERT_FALSE(word.empty());
        ASSERT_TRUE(is_valid_utf8(word));
        ASSERT_NE(word.front(), '\'');
        ASSERT_NE(word.back(), '\'');
        for (char c : word) ASSERT_FALSE(c >= 'A' && c <= 'Z');
      }
    }
  }
}

TEST(Tokenizer, ValidatesUtf8WithTheOffsetOfTheFirstBadByte) {
  size_t offset = 99;
  EXPECT_TRUE(is_valid_utf8("plain \u00e9\u20ac\U0001F600 \xef\xbf\xbd", &offset));
  EXPECT_EQ(offset, 99u);
  EXPECT_FALSE(is_valid_utf8("ab\x80", &offset));
  EXPECT_EQ(offset, 2u);
  EXPECT_FALSE(is_valid_utf8("\xc1\xbf", &offset));  // overlong
  EXPECT_EQ(offset, 0u);
  EXPECT_FALSE(is_valid_utf8("ok\xed\xa0\x80", &offset));  // surrogate
  EXPECT_EQ(offset, 2u);
  EXPECT_FALSE(is_valid_utf8("\xe2\x82", &offset));  // truncated
  EXPECT_EQ(offset, 0u);
}

TEST(Tokenizer, NormalizesWordListEntries) {
  const Tokenizer tokenizer;
  EXPECT_EQ(tokenizer.normalize_word("Don't"), "don't");
  EXPECT_EQ(tokenizer.normalize_word("A's"), "a's");
  EXPECT_EQ(tokenizer.normalize_word("  \u00c9clair\r"), "\u00e9clair");
  EXPECT_EQ(tokenizer.normalize_word("ice cream"), "");
  EXPECT_EQ(tokenizer.normalize_word("e-mail"), "");
  EXPECT_EQ(tokenizer.normalize_word("--"), "");
}

}  // namespace
