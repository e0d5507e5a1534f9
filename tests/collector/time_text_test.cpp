// Times in query parameters and output (util/time_text.h). Expected values
// computed apart (Python's calendar.timegm, and 400-year cycles of
// datetime.date for years beyond its range).
#include "util/time_text.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace {

using namespace blur::collector;

TEST(TimeText, ParsesEachForm) {
  EXPECT_EQ(parse_time("2026-11-23T10:00:00Z"), 1795428000);
  EXPECT_EQ(parse_time("2026-11-23t11:00:00.999+01:00"), 1795428000);
  EXPECT_EQ(parse_time("2026-11-23 05:30:00-04:30"), 1795428000);
  EXPECT_EQ(parse_time("2026-11-23"), 1795392000);
  EXPECT_EQ(parse_time("1795428000"), 1795428000);
  EXPECT_EQ(parse_time("-1"), -1);
  EXPECT_EQ(parse_time("2016-12-31T23:59:60Z"), parse_time("2017-01-01T00:00:00Z"));
  for (const char* bad : {"", "-", "yesterday", "2026-13-01", "2026-02-29", "2026-11-23T10:00:00",
                          "2026-11-23T10:00Z", "2026-11-23T10:00:00.Z", "2026-11-23T10:00:00+1:00",
                          "2026-11-23T24:00:00Z", "1234567890123"}) {
    EXPECT_FALSE(parse_time(bad)) << bad;
  }
}

// Found by tests/fuzz/time_text_fuzz: times before year 0 or after 9999
// parsed, and format_time wrote them with a signed or five-digit year that
// parse_time refuses, so an accepted ?from= could not be read back from the
// answer.
TEST(TimeText, AcceptsExactlyTheDocumentedRange) {
  EXPECT_EQ(parse_time("0000-01-01T00:00:00Z"), kEarliestTime);
  EXPECT_EQ(parse_time("-62167219200"), kEarliestTime);
  EXPECT_EQ(parse_time("9999-12-31T23:59:59Z"), kLatestTime);
  EXPECT_EQ(parse_time("253402300799"), kLatestTime);
  EXPECT_EQ(format_time(kEarliestTime), "0000-01-01T00:00:00Z");
  EXPECT_EQ(format_time(kLatestTime), "9999-12-31T23:59:59Z");
  for (const char* outside : {"-62167219201", "253402300800", "999999999999", "-999999999999",
                              "0000-01-01T00:00:00+00:01", "9999-12-31T23:59:59-00:01",
                              "9999-12-31T23:59:60Z"}) {
    EXPECT_FALSE(parse_time(outside)) << outside;
  }
}

// Found by tests/fuzz/time_text_fuzz (UBSan): t - 86399, then days * 86400,
// and unix_millis - millis overflowed int64 near INT64_MIN.
TEST(TimeText, FormatsEveryInt64) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  EXPECT_EQ(format_time(kMin), "-292277022657-01-27T08:29:52Z");
  EXPECT_EQ(format_time(kMax), "292277026596-12-04T15:30:07Z");
  EXPECT_EQ(format_time(-1), "1969-12-31T23:59:59Z");
  EXPECT_EQ(format_time_millis(kMin), "-292275055-05-16T16:47:04.192Z");
  EXPECT_EQ(format_time_millis(kMax), "292278994-08-17T07:12:55.807Z");
  EXPECT_EQ(format_time_millis(-1), "1969-12-31T23:59:59.999Z");
}

TEST(TimeText, FormattedTimesParseBack) {
  for (int64_t t = kEarliestTime; t <= kLatestTime - 9876543210; t += 9876543210) {
    EXPECT_EQ(parse_time(format_time(t)), t) << t;
  }
}

}  // namespace
