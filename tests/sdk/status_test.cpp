#include "blur/status.h"

#include <string.h>

#include "gtest/gtest.h"

namespace {

constexpr int kStatusCount = static_cast<int>(blur::kLastStatus) + 1;

TEST(Status, EveryStatusHasItsOwnName) {
  EXPECT_EQ(strcmp(blur::status_name(blur::Status::kOk), "ok"), 0);
  EXPECT_EQ(strcmp(blur::status_name(blur::Status::kBudgetExhausted), "lifetime budget exhausted"), 0);
  EXPECT_EQ(strcmp(blur::status_name(blur::Status::kStorageRollback), "storage rolled back"), 0);
  EXPECT_EQ(strcmp(blur::status_name(blur::Status::kNotBuilt), "not in this build"), 0);
  for (int i = 0; i < kStatusCount; ++i) {
    const char* name = blur::status_name(static_cast<blur::Status>(i));
    EXPECT_GT(strlen(name), 1u);
    EXPECT_NE(strcmp(name, "unknown status"), 0);
    for (int j = 0; j < i; ++j) {
      EXPECT_NE(strcmp(name, blur::status_name(static_cast<blur::Status>(j))), 0);
    }
  }
}

TEST(Status, ValuesPastTheLastAreUnknown) {
  EXPECT_EQ(strcmp(blur::status_name(static_cast<blur::Status>(kStatusCount)), "unknown status"), 0);
  EXPECT_EQ(strcmp(blur::status_name(static_cast<blur::Status>(255)), "unknown status"), 0);
}

}  // namespace
