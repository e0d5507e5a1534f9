#include "posix_port.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <string>

#include "blur/storage/ledger.h"
#include "blur/sampling/rng.h"

namespace {

using blur::Status;
using blur::posix::PosixPort;

struct TempFile {
  TempFile() {
    char pattern[] = "/tmp/blur-posix-port-XXXXXX";
    dir = mkdtemp(pattern);
    path = dir + "/storage.bin";
  }
  ~TempFile() {
    unlink(path.c_str());
    rmdir(dir.c_str());
  }
  std::string dir, path;
};

TEST(PosixPort, NewStorageIsErasedAndBehavesLikeFlash) {
  TempFile file;
  PosixPort posix;
  ASSERT_EQ(posix.open(file.path.c_str(), 256, 3), Status::kOk);
  const blur::Port port = posix.port();
  EXPECT_EQ(port.block_size, 256u);
  EXPECT_EQ(port.block_count, 3u);
  uint8_t bytes[16];
  ASSERT_EQ(port.read(port.context, 2, 240, bytes, sizeof bytes), Status::kOk);
  for (uint8_t b : bytes) EXPECT_EQ(b, 0xFF);
  const uint8_t data[4] = {1, 2, 3, 4};
  ASSERT_EQ(port.prog(port.context, 1, 10, data, sizeof data), Status::kOk);
  ASSERT_EQ(port.sync(port.context), Status::kOk);
  ASSERT_EQ(port.read(port.context, 1, 10, bytes, 4), Status::kOk);
  EXPECT_EQ(memcmp(bytes, data, 4), 0);
  ASSERT_EQ(port.erase(port.context, 1), Status::kOk);
  ASSERT_EQ(port.read(port.context, 1, 10, bytes, 4), Status::kOk);
  EXPECT_EQ(bytes[0], 0xFF);
  EXPECT_EQ(port.read(port.context, 3, 0, bytes, 1), Status::kStorageFailure);
  EXPECT_EQ(port.read(port.context, 0, 250, bytes, 16), Status::kStorageFailure);
  EXPECT_EQ(port.erase(port.context, 3), Status::kStorageFailure);
}

TEST(PosixPort, LedgerSurvivesARestartOfTheProcessState) {
  TempFile file;
  {
    PosixPort posix;
    ASSERT_EQ(posix.open(file.path.c_str()), Status::kOk);
    blur::Ledger ledger;
    ASSERT_EQ(ledger.provision(posix.port(), blur::Partition{0, 2}, {5000000}, 77), Status::kOk);
    uint64_t id = 0;
    ASSERT_EQ(ledger.charge(1500000, 1, &id), Status::kOk);
  }
  PosixPort posix;
  ASSERT_EQ(posix.open(file.path.c_str()), Status::kOk);
  blur::Ledger ledger;
  ASSERT_EQ(ledger.open(posix.port(), blur::Partition{0, 2}), Status::kOk);
  EXPECT_EQ(ledger.spent_micros(), 1500000u);
  EXPECT_EQ(ledger.device_nonce(), 77u);
}

TEST(PosixPort, EntropyFromTheKernelSeedsTheDrbg) {
  TempFile file;
  PosixPort posix;
  ASSERT_EQ(posix.open(file.path.c_str()), Status::kOk);
  uint8_t a[32] = {}, b[32] = {}, zero[32] = {};
  const blur::Port port = posix.port();
  ASSERT_EQ(port.entropy(port.context, a, sizeof a), Status::kOk);
  ASSERT_EQ(port.entropy(port.context, b, sizeof b), Status::kOk);
  EXPECT_NE(memcmp(a, b, sizeof a), 0);  // equal with probability 2^-256
  EXPECT_NE(memcmp(a, zero, sizeof a), 0);
  blur::Rng rng;
  EXPECT_EQ(rng.seed(port, nullptr, 0), Status::kOk);
}

TEST(PosixPort, UnopenablePathIsAStorageFailure) {
  PosixPort posix;
  EXPECT_EQ(posix.open("/nonexistent-dir/storage.bin"), Status::kStorageFailure);
  EXPECT_EQ(posix.open(nullptr), Status::kInvalidArgument);
}

}  // namespace
