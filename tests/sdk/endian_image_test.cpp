// Cross-endianness: the ledger's and the report queue's on-flash formats and
// the batch's wire format are defined byte by byte. tests/vectors/endian_le.hex
// was written on a little-endian target and endian_be.hex on a big-endian one
// (s390x), both by endian_image_writer (endian_images.h). On every target:
// what this target writes is its byte order's vector, byte for byte, and the
// other byte order's images open to the same state and continue (a second
// boot on them) to the other's bytes again.
#include <gtest/gtest.h>

#include "endian_images.h"

namespace {

#include "endian_be.inc"
#include "endian_le.inc"

using blur::Status;
using namespace blur::endian_images;

// A vector file's four sections, from its hex text ("@name size" lines).
struct Vector {
  Image first, second;
};
// Static: the images are 4 KiB each, too large for a Cortex-M test's stack.
Vector vector_a, vector_b;
Image image_a, image_b;

uint8_t* section(Vector* v, const char* name, size_t** size) {
  static size_t flash_size;
  if (strcmp(name, "first_flash") == 0) return *size = &flash_size, v->first.flash;
  if (strcmp(name, "second_flash") == 0) return *size = &flash_size, v->second.flash;
  if (strcmp(name, "first_batch") == 0) return *size = &v->first.batch_size, v->first.batch;
  if (strcmp(name, "second_batch") == 0) return *size = &v->second.batch_size, v->second.batch;
  return nullptr;
}

// Reads `text` into *v; false on a malformed file.
bool parse(const char* text, Vector* v) {
  memset(v, 0, sizeof *v);
  uint8_t* out = nullptr;
  size_t* size = nullptr;
  size_t declared = 0;
  auto nibble = [](char h) { return h <= '9' ? h - '0' : h - 'a' + 10; };
  for (const char* line = text; *line != '\0';) {
    const char* end = line;
    while (*end != '\0' && *end != '\n') ++end;
    if (*line == '@') {
      if (out != nullptr && *size != declared) return false;
      char name[32] = {};
      const char* space = line + 1;
      while (space < end && *space != ' ') ++space;
      if (space - line - 1 >= static_cast<long>(sizeof name)) return false;
      memcpy(name, line + 1, static_cast<size_t>(space - line - 1));
      out = section(v, name, &size);
      if (out == nullptr) return false;
      declared = 0;
      for (const char* c = space + 1; c < end; ++c)
        declared = declared * 10 + static_cast<size_t>(*c - '0');
      *size = 0;
    } else if (*line != '#' && line != end) {
      if (out == nullptr) return false;
      for (const char* c = line; c + 1 < end; c += 2) {
        if (*size >=
            (out == v->first.flash || out == v->second.flash ? kFlashSize : kBatchCapacity)) {
          return false;
        }
        out[(*size)++] = static_cast<uint8_t>(nibble(c[0]) << 4 | nibble(c[1]));
      }
    }
    line = *end == '\n' ? end + 1 : end;
  }
  return out != nullptr && *size == declared;
}

bool little_endian_cpu() {
  const uint16_t probe = 1;
  return *reinterpret_cast<const uint8_t*>(&probe) == 1;
}

void expect_same_image(const Image& got, const Image& want) {
  EXPECT_EQ(memcmp(got.flash, want.flash, kFlashSize), 0);
  ASSERT_EQ(got.batch_size, want.batch_size);
  EXPECT_EQ(memcmp(got.batch, want.batch, want.batch_size), 0);
}

void expect_state(const Expected& got, const Expected& want) {
  EXPECT_EQ(got.spent_micros, want.spent_micros);
  EXPECT_EQ(got.next_report_id, want.next_report_id);
  EXPECT_EQ(got.pending_count, want.pending_count);
}

// The storage `flash` opened by a new Client: its state, and its pending
// batch in *batch.
Expected open_state(const uint8_t* flash, Image* batch) {
  blur::sim::SimPort& port = fresh_port(kSecondSeed);
  memcpy(port.flash(), flash, kFlashSize);
  blur::Client& client = fresh_client();
  EXPECT_EQ(client.open(port.port()), Status::kOk);
  EXPECT_EQ(add_metrics(client), Status::kOk);
  uint64_t token = 0;
  EXPECT_EQ(client.pending_batch(batch->batch, sizeof batch->batch, &batch->batch_size,
                                 &batch->batch_count, &token),
            Status::kOk);
  return state(client);
}

TEST(EndianImage, ThisTargetWritesItsByteOrdersVector) {
  Vector& own = vector_a;
  ASSERT_TRUE(parse(little_endian_cpu() ? kEndianLe : kEndianBe, &own));
  Image& first = image_a;
  Image& second = image_b;
  ASSERT_EQ(write_first(&first), Status::kOk);
  ASSERT_EQ(write_second(first.flash, &second), Status::kOk);
  expect_same_image(first, own.first);
  expect_same_image(second, own.second);
}

TEST(EndianImage, ReadsAndContinuesTheOtherByteOrdersImages) {
  Vector& other = vector_a;
  ASSERT_TRUE(parse(little_endian_cpu() ? kEndianBe : kEndianLe, &other));
  // The first boot's storage: the same ledger and queue state, the same
  // pending batch, byte for byte.
  Image& read = image_a;
  expect_state(open_state(other.first.flash, &read), kAfterFirst);
  ASSERT_EQ(read.batch_size, other.first.batch_size);
  EXPECT_EQ(memcmp(read.batch, other.first.batch, read.batch_size), 0);
  // A second boot here on the other's storage writes what the other wrote.
  Image& second = image_b;
  ASSERT_EQ(write_second(other.first.flash, &second), Status::kOk);
  expect_same_image(second, other.second);
  expect_state(open_state(other.second.flash, &read), kAfterSecond);
}

TEST(EndianImage, BothByteOrdersWroteTheSameBytes) {
  Vector& le = vector_a;
  Vector& be = vector_b;
  ASSERT_TRUE(parse(kEndianLe, &le));
  ASSERT_TRUE(parse(kEndianBe, &be));
  expect_same_image(le.first, be.first);
  expect_same_image(le.second, be.second);
}

}  // namespace
