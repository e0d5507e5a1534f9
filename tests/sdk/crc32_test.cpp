#include "blur/storage/crc32.h"

#include <gtest/gtest.h>

namespace {

TEST(Crc32, MatchesTheStandardCheckValue) {
  const uint8_t text[] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  EXPECT_EQ(blur::crc32(text, sizeof text), 0xCBF43926u);  // CRC-32/ISO-HDLC check
  EXPECT_EQ(blur::crc32(text, 0), 0u);
}

}  // namespace
