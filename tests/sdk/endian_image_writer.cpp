// Prints the cross-endianness images (endian_images.h) as a vector file:
//   endian_image_writer > tests/vectors/endian_le.hex   (a little-endian target)
//   qemu-s390x -L /usr/s390x-linux-gnu build/s390x/tests/endian_image_writer
//       > tests/vectors/endian_be.hex                   (a big-endian one)
#include <stdio.h>

#include "endian_images.h"

namespace {

void print_section(const char* name, const uint8_t* bytes, size_t size) {
  printf("@%s %zu\n", name, size);
  for (size_t i = 0; i < size; ++i) {
    printf("%02x%s", bytes[i], (i % 32 == 31 || i + 1 == size) ? "\n" : "");
  }
}

}  // namespace

int main() {
  using namespace blur::endian_images;
  static Image first, second;
  if (write_first(&first) != blur::Status::kOk ||
      write_second(first.flash, &second) != blur::Status::kOk) {
    fprintf(stderr, "endian_image_writer: writing the images failed\n");
    return 1;
  }
  const uint16_t probe = 1;
  const bool little = *reinterpret_cast<const uint8_t*>(&probe) == 1;
  printf(
      "# Written by tests/sdk/endian_image_writer.cpp on a %s-endian CPU (endian_images.h\n"
      "# says how); read and continued by endian_image_test on the other byte order.\n"
      "# @first_flash: ledger (blocks 0-1) and report queue (2-5) after the first boot,\n"
      "# @first_batch: its pending blur.ReportBatch (%zu reports); @second_*: the same after\n"
      "# the second boot, which continued @first_flash.\n",
      little ? "little" : "big", first.batch_count);
  print_section("first_flash", first.flash, kFlashSize);
  print_section("first_batch", first.batch, first.batch_size);
  print_section("second_flash", second.flash, kFlashSize);
  print_section("second_batch", second.batch, second.batch_size);
  return 0;
}
