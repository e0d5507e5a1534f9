// Content negotiation of the read routes (server/accept_header.h).
#include "server/accept_header.h"

#include <gtest/gtest.h>

namespace {

using blur::collector::http::choose_media_type;

const std::vector<std::string> kOffered = {"application/json", "text/csv", "application/x-ndjson",
                                           "application/jsonl"};

std::optional<std::size_t> choose(std::string_view accept) {
  return choose_media_type(accept, kOffered);
}

TEST(AcceptHeader, NoHeaderOrAnythingTakesTheDefault) {
  EXPECT_EQ(choose(""), 0u);
  EXPECT_EQ(choose("  "), 0u);
  EXPECT_EQ(choose("*/*"), 0u);
  EXPECT_EQ(choose("application/*"), 0u);
}

TEST(AcceptHeader, ExactTypesCaseAndParametersIgnored) {
  EXPECT_EQ(choose("text/csv"), 1u);
  EXPECT_EQ(choose("Text/CSV; charset=utf-8"), 1u);
  EXPECT_EQ(choose("application/x-ndjson"), 2u);
  EXPECT_EQ(choose("application/jsonl"), 3u);
  EXPECT_EQ(choose("text/*"), 1u);
}

TEST(AcceptHeader, HighestQualityWinsTiesGoToTheEarlierOffer) {
  EXPECT_EQ(choose("application/json;q=0.5, text/csv"), 1u);
  EXPECT_EQ(choose("text/csv;q=0.2, application/x-ndjson;q=0.9"), 2u);
  EXPECT_EQ(choose("text/csv, application/json"), 0u);  // equal q: the default first
  EXPECT_EQ(choose("text/csv;q=1.000, */*;q=0.999"), 1u);
}

TEST(AcceptHeader, TheMostSpecificEntryDecides) {
  // text/csv excluded although */* takes everything: JSON.
  EXPECT_EQ(choose("text/csv;q=0, */*;q=0.1"), 0u);
  EXPECT_EQ(choose("*/*;q=0.1, application/json;q=0"), 1u);
}

TEST(AcceptHeader, NothingAcceptableIsRefused) {
  EXPECT_EQ(choose("image/png"), std::nullopt);
  EXPECT_EQ(choose("text/html, application/xml"), std::nullopt);
  EXPECT_EQ(choose("text/csv;q=0"), std::nullopt);
  EXPECT_EQ(choose("*/*;q=0"), std::nullopt);
  EXPECT_EQ(choose_media_type("text/csv", {}), std::nullopt);
}

TEST(AcceptHeader, MalformedEntriesAreIgnored) {
  EXPECT_EQ(choose("text/csv;q=2, application/x-ndjson"), 2u);  // q above 1
  EXPECT_EQ(choose("text/csv;q=0.5x, application/x-ndjson"), 2u);
  EXPECT_EQ(choose("text/csv;q=, text/csv"), 1u);
  EXPECT_EQ(choose("csv, /csv, text/, ,,"), std::nullopt);
  EXPECT_EQ(choose("text/csv;q=0.0001"), std::nullopt);  // four decimals: malformed
  EXPECT_EQ(choose("text/csv;q=0.001"), 1u);
}

}  // namespace
