// The JSON writer of the large answers: what it writes is valid JSON that
// means what was written, whatever bytes untrusted text holds.
#include "util/json_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace {

using blur::collector::JsonWriter;

TEST(JsonWriter, NestedValuesReadBackAsWritten) {
  JsonWriter out;
  out.begin_object()
      .member("n", uint64_t{18446744073709551615u})
      .member("neg", int64_t{-5})
      .member("x", 0.1)
      .member("tiny", 5e-324)
      .member("flag", true)
      .member("name", "olh");
  out.key("list").begin_array().value(1.5).begin_object().end_object().begin_array().end_array();
  out.end_array().key("raw").raw(R"({"a":[1,2]})").end_object();
  const auto parsed = nlohmann::json::parse(out.text());
  EXPECT_EQ(parsed["n"].get<uint64_t>(), 18446744073709551615u);
  EXPECT_EQ(parsed["neg"].get<int64_t>(), -5);
  EXPECT_EQ(parsed["x"].get<double>(), 0.1);  // shortest round trip, exact
  EXPECT_EQ(parsed["tiny"].get<double>(), 5e-324);
  EXPECT_EQ(parsed["flag"], true);
  EXPECT_EQ(parsed["name"], "olh");
  EXPECT_EQ(parsed["list"].size(), 3u);
  EXPECT_EQ(parsed["list"][0].get<double>(), 1.5);
  EXPECT_EQ(parsed["raw"]["a"][1], 2);
}

TEST(JsonWriter, NonFiniteNumbersAreNull) {
  JsonWriter out;
  out.begin_array()
      .value(std::numeric_limits<double>::quiet_NaN())
      .value(std::numeric_limits<double>::infinity())
      .value(-std::numeric_limits<double>::infinity())
      .end_array();
  EXPECT_EQ(out.text(), "[null,null,null]");
}

TEST(JsonWriter, ControlCharactersAndQuotesAreEscaped) {
  JsonWriter out;
  out.begin_array().value(std::string_view("a\"b\\c\n\x01\x1f\x7f", 9)).end_array();
  EXPECT_EQ(out.text(), R"(["a\"b\\c\n\u0001\u001f)"
                        "\x7f"
                        R"("])");
  EXPECT_EQ(nlohmann::json::parse(out.text())[0], std::string("a\"b\\c\n\x01\x1f\x7f", 9));
}

// Every byte that is not part of well-formed UTF-8 (a stray continuation, a
// truncated sequence, an overlong form, a surrogate, past U+10FFFF) becomes
// U+FFFD; well-formed sequences pass unchanged.
TEST(JsonWriter, InvalidUtf8BecomesReplacementCharacters) {
  const struct {
    std::string in, out;
  } cases[] = {
      {"\xff", "\xEF\xBF\xBD"},
      {"\x80", "\xEF\xBF\xBD"},
      {"a\xC3", "a\xEF\xBF\xBD"},
      {"\xC0\xAF", "\xEF\xBF\xBD\xEF\xBF\xBD"},
      {"\xED\xA0\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},
      {"\xF4\x90\x80\x80", "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},
      {"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"},
  };
  for (const auto& c : cases) {
    JsonWriter out;
    out.begin_array().value(c.in).end_array();
    EXPECT_EQ(nlohmann::json::parse(out.text())[0], c.out) << out.text();
  }
}

// Random bytes as keys and values: always a document nlohmann parses.
TEST(JsonWriter, RandomBytesAlwaysGiveValidJson) {
  std::mt19937 rng(12);
  for (int round = 0; round < 2000; ++round) {
    std::string bytes(rng() % 12, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    JsonWriter out;
    out.begin_object().member(bytes, bytes).end_object();
    EXPECT_TRUE(nlohmann::json::accept(out.text())) << round;
  }
}

}  // namespace

namespace {

TEST(WellFormedUtf8, KeepsUtf8AndReplacesEachBadByte) {
  using blur::collector::well_formed_utf8;
  EXPECT_EQ(well_formed_utf8("plain, \"quoted\"\r\n"), "plain, \"quoted\"\r\n");
  EXPECT_EQ(well_formed_utf8("caf\xc3\xa9 \xe2\x82\xac"), "caf\xc3\xa9 \xe2\x82\xac");
  EXPECT_EQ(well_formed_utf8("a\xff"
                             "b\xc3"),
            "a\xef\xbf\xbd"
            "b\xef\xbf\xbd");
  EXPECT_EQ(well_formed_utf8("\xed\xa0\x80"),
            "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // a surrogate
}

}  // namespace
