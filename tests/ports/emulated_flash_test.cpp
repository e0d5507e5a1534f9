// ports/flash: the emulated flash behind the simulator and the QEMU board
// port. Runs on the host (GoogleTest) and on Cortex-M (mini_gtest): no
// fixtures, buffers are static.
#include "emulated_flash.h"

#include <gtest/gtest.h>
#include <string.h>

#include "sim_port.h"
#if defined(BLUR_TEST_BOARD_PORT)
#include "board_port.h"
#endif

namespace {

using blur::Status;
using blur::flash::Config;
using blur::flash::EmulatedFlash;
using blur::flash::WearOut;

constexpr uint32_t kBlockSize = 64;
constexpr uint32_t kBlocks = 4;
uint8_t g_bytes[kBlockSize * kBlocks];
uint32_t g_counts[kBlocks];

Config config(uint32_t prog_size, uint8_t erase_value, bool refuse_second_program) {
  Config c;
  c.block_size = kBlockSize;
  c.block_count = kBlocks;
  c.prog_size = prog_size;
  c.erase_value = erase_value;
  c.refuse_second_program = refuse_second_program;
  return c;
}

// Bytes of block `block` in [from, to) that differ from `value`.
uint32_t count_not(const EmulatedFlash& flash, uint32_t block, uint32_t from, uint32_t to,
                   uint8_t value) {
  uint32_t n = 0;
  for (uint32_t i = from; i < to; ++i) {
    if (flash.bytes()[block * kBlockSize + i] != value) ++n;
  }
  return n;
}

void fill_pattern(uint8_t* out, uint32_t size, uint8_t seed) {
  for (uint32_t i = 0; i < size; ++i) out[i] = static_cast<uint8_t>(seed + 37 * i + (i >> 3));
}

TEST(EmulatedFlash, RefusesInvalidConfigurations) {
  EmulatedFlash flash;
  uint8_t byte = 0;
  EXPECT_EQ(flash.read(0, 0, &byte, 1), Status::kStorageFailure);  // never configured
  const Config good = config(8, 0xFF, true);
  Config c = good;
  c.prog_size = 3;
  EXPECT_EQ(flash.init(c, g_bytes, g_counts), Status::kInvalidArgument);
  c.prog_size = 512;
  c.block_size = 1024;
  EXPECT_EQ(flash.init(c, g_bytes, g_counts), Status::kInvalidArgument);
  c = good;
  c.block_size = 60;  // not a multiple of 8
  EXPECT_EQ(flash.init(c, g_bytes, g_counts), Status::kInvalidArgument);
  c = good;
  c.erase_value = 0x0F;
  EXPECT_EQ(flash.init(c, g_bytes, g_counts), Status::kInvalidArgument);
  c = good;
  c.block_count = 0;
  EXPECT_EQ(flash.init(c, g_bytes, g_counts), Status::kInvalidArgument);
  c = good;
  c.erase_cycles = 10;  // wear needs counters
  EXPECT_EQ(flash.init(c, g_bytes, nullptr), Status::kInvalidArgument);
  EXPECT_EQ(flash.init(good, nullptr, g_counts), Status::kInvalidArgument);
  EXPECT_FALSE(flash.configured());
  // A failed init leaves a configured flash unconfigured.
  ASSERT_EQ(flash.init(good, g_bytes, g_counts), Status::kOk);
  EXPECT_TRUE(flash.configured());
  EXPECT_EQ(flash.init(c, nullptr, g_counts), Status::kInvalidArgument);
  EXPECT_FALSE(flash.configured());
  EXPECT_EQ(flash.read(0, 0, &byte, 1), Status::kStorageFailure);
  EXPECT_EQ(flash.erase(0), Status::kStorageFailure);
}

TEST(EmulatedFlash, EraseFillsTheBlockWithTheErasedValue) {
  for (const uint8_t erase_value : {uint8_t{0xFF}, uint8_t{0x00}}) {
    EmulatedFlash flash;
    memset(g_bytes, 0x5A, sizeof g_bytes);
    ASSERT_EQ(flash.init(config(1, erase_value, true), g_bytes, g_counts), Status::kOk);
    EXPECT_EQ(g_bytes[0], 0x5A);  // init keeps the bytes
    ASSERT_EQ(flash.erase(1), Status::kOk);
    uint8_t block[kBlockSize];
    ASSERT_EQ(flash.read(1, 0, block, kBlockSize), Status::kOk);
    for (uint8_t b : block) EXPECT_EQ(b, erase_value);
    EXPECT_EQ(count_not(flash, 0, 0, kBlockSize, 0x5A), 0u);  // other blocks untouched
    EXPECT_EQ(count_not(flash, 2, 0, kBlockSize, 0x5A), 0u);
    EXPECT_EQ(flash.erase(kBlocks), Status::kStorageFailure);
    flash.erase_all();  // factory state, not counted
    EXPECT_EQ(count_not(flash, 3, 0, kBlockSize, erase_value), 0u);
    EXPECT_EQ(flash.total_erases(), 1u);
    EXPECT_EQ(flash.erase_count(1), 1u);
    blur::Port port{};
    flash.describe(&port);
    EXPECT_EQ(port.erase_value, erase_value);
    EXPECT_EQ(port.block_size, kBlockSize);
    EXPECT_EQ(port.block_count, kBlocks);
    EXPECT_EQ(port.prog_size, 1u);
  }
}

TEST(EmulatedFlash, ReadsOutOfRangeFail) {
  EmulatedFlash flash;
  ASSERT_EQ(flash.init(config(1, 0xFF, true), g_bytes, g_counts), Status::kOk);
  uint8_t out[8];
  EXPECT_EQ(flash.read(kBlocks, 0, out, 1), Status::kStorageFailure);
  EXPECT_EQ(flash.read(0, kBlockSize - 4, out, 8), Status::kStorageFailure);
  EXPECT_EQ(flash.read(0, kBlockSize + 1, out, 0), Status::kStorageFailure);
  EXPECT_EQ(flash.read(0, kBlockSize - 8, out, 8), Status::kOk);
  EXPECT_EQ(flash.prog(0, kBlockSize - 4, out, 8), Status::kStorageFailure);
  EXPECT_EQ(flash.total_programs(), 0u);
}

TEST(EmulatedFlash, ProgramsWholeAlignedUnitsAndCountsTheOthers) {
  EmulatedFlash flash;
  ASSERT_EQ(flash.init(config(8, 0xFF, true), g_bytes, g_counts), Status::kOk);
  flash.erase_all();
  uint8_t data[24], back[24];
  fill_pattern(data, sizeof data, 1);
  ASSERT_EQ(flash.prog(0, 8, data, 16), Status::kOk);
  ASSERT_EQ(flash.read(0, 8, back, 16), Status::kOk);
  EXPECT_EQ(memcmp(back, data, 16), 0);
  EXPECT_EQ(flash.misaligned_programs(), 0u);
  // Misaligned offset, partial unit, whole-unit offset with a partial tail.
  EXPECT_EQ(flash.prog(1, 4, data, 8), Status::kStorageFailure);
  EXPECT_EQ(flash.prog(1, 0, data, 4), Status::kStorageFailure);
  EXPECT_EQ(flash.prog(1, 8, data, 12), Status::kStorageFailure);
  EXPECT_EQ(flash.misaligned_programs(), 3u);
  EXPECT_EQ(count_not(flash, 1, 0, kBlockSize, 0xFF), 0u);  // nothing written
  EXPECT_EQ(flash.total_programs(), 1u);
  EXPECT_EQ(flash.reprogrammed_units(), 0u);
  // prog_size 1: any offset and size.
  ASSERT_EQ(flash.init(config(1, 0xFF, true), g_bytes, g_counts), Status::kOk);
  flash.erase_all();
  EXPECT_EQ(flash.prog(2, 3, data, 5), Status::kOk);
  EXPECT_EQ(flash.misaligned_programs(), 0u);
}

TEST(EmulatedFlash, EccFlashRefusesASecondProgramOfAUnit) {
  for (const uint8_t erase_value : {uint8_t{0xFF}, uint8_t{0x00}}) {
    EmulatedFlash flash;
    ASSERT_EQ(flash.init(config(8, erase_value, true), g_bytes, g_counts), Status::kOk);
    flash.erase_all();
    uint8_t first[8], second[16], back[16];
    fill_pattern(first, sizeof first, 3);
    fill_pattern(second, sizeof second, 200);
    ASSERT_EQ(flash.prog(0, 16, first, 8), Status::kOk);
    EXPECT_EQ(flash.prog(0, 16, second, 8), Status::kStorageFailure);
    EXPECT_EQ(flash.reprogrammed_units(), 1u);
    ASSERT_EQ(flash.read(0, 16, back, 8), Status::kOk);
    EXPECT_EQ(memcmp(back, first, 8), 0);
    // A call over an erased unit and a programmed one: refused as a whole.
    EXPECT_EQ(flash.prog(0, 8, second, 16), Status::kStorageFailure);
    EXPECT_EQ(flash.reprogrammed_units(), 2u);
    EXPECT_EQ(count_not(flash, 0, 8, 16, erase_value), 0u);
    ASSERT_EQ(flash.read(0, 16, back, 8), Status::kOk);
    EXPECT_EQ(memcmp(back, first, 8), 0);
    // After an erase the unit programs again.
    ASSERT_EQ(flash.erase(0), Status::kOk);
    ASSERT_EQ(flash.prog(0, 16, second, 8), Status::kOk);
    ASSERT_EQ(flash.read(0, 16, back, 8), Status::kOk);
    EXPECT_EQ(memcmp(back, second, 8), 0);
    EXPECT_EQ(flash.reprogrammed_units(), 2u);
  }
}

TEST(EmulatedFlash, NorFlashProgramsOnlyAwayFromTheErasedValue) {
  EmulatedFlash flash;
  ASSERT_EQ(flash.init(config(1, 0xFF, false), g_bytes, g_counts), Status::kOk);
  flash.erase_all();
  const uint8_t a = 0xF0, b = 0x3C;
  uint8_t back = 0;
  ASSERT_EQ(flash.prog(0, 5, &a, 1), Status::kOk);
  ASSERT_EQ(flash.prog(0, 5, &b, 1), Status::kOk);  // NOR: allowed, ANDs
  ASSERT_EQ(flash.read(0, 5, &back, 1), Status::kOk);
  EXPECT_EQ(back, 0x30);
  EXPECT_EQ(flash.reprogrammed_units(), 1u);

  ASSERT_EQ(flash.init(config(4, 0x00, false), g_bytes, g_counts), Status::kOk);
  flash.erase_all();
  const uint8_t c[4] = {0x0F, 0x00, 0x81, 0x00}, d[4] = {0x3C, 0x00, 0x00, 0x00};
  uint8_t back4[4];
  ASSERT_EQ(flash.prog(1, 4, c, 4), Status::kOk);
  ASSERT_EQ(flash.prog(1, 4, d, 4), Status::kOk);  // ORs
  ASSERT_EQ(flash.read(1, 4, back4, 4), Status::kOk);
  EXPECT_EQ(back4[0], 0x3F);
  EXPECT_EQ(back4[1], 0x00);
  EXPECT_EQ(back4[2], 0x81);
  EXPECT_EQ(flash.reprogrammed_units(), 1u);
}

TEST(EmulatedFlash, CountsErasesPerBlock) {
  EmulatedFlash flash;
  ASSERT_EQ(flash.init(config(1, 0xFF, true), g_bytes, g_counts), Status::kOk);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(flash.erase(0), Status::kOk);
  ASSERT_EQ(flash.erase(2), Status::kOk);
  EXPECT_EQ(flash.erase(kBlocks), Status::kStorageFailure);  // not counted
  EXPECT_EQ(flash.erase_count(0), 3u);
  EXPECT_EQ(flash.erase_count(1), 0u);
  EXPECT_EQ(flash.erase_count(2), 1u);
  EXPECT_EQ(flash.erase_count(kBlocks), 0u);
  EXPECT_EQ(flash.max_erase_count(), 3u);
  EXPECT_EQ(flash.total_erases(), 4u);
  EXPECT_EQ(flash.flash_operations(), 4u);
  EXPECT_EQ(g_counts[0], 3u);  // in the caller's counters
  // Re-init zeroes them; without counters nothing is counted.
  ASSERT_EQ(flash.init(config(1, 0xFF, true), g_bytes, nullptr), Status::kOk);
  ASSERT_EQ(flash.erase(0), Status::kOk);
  EXPECT_EQ(flash.erase_count(0), 0u);
  EXPECT_EQ(flash.total_erases(), 1u);
}

TEST(EmulatedFlash, WornBlockRefusesProgramsAndErases) {
  EmulatedFlash flash;
  Config c = config(4, 0xFF, true);
  c.erase_cycles = 3;
  c.wear_out = WearOut::kRefusesPrograms;
  ASSERT_EQ(flash.init(c, g_bytes, g_counts), Status::kOk);
  flash.erase_all();
  uint8_t data[8], back[8];
  fill_pattern(data, sizeof data, 9);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(flash.erase(1), Status::kOk);
  EXPECT_FALSE(flash.worn_out(1));
  ASSERT_EQ(flash.prog(1, 0, data, 4), Status::kOk);   // a block erased 3 times still works
  EXPECT_EQ(flash.erase(1), Status::kStorageWornOut);  // the 4th erase meets a worn block
  EXPECT_TRUE(flash.worn_out(1));
  EXPECT_EQ(flash.erase_count(1), 4u);
  EXPECT_EQ(flash.prog(1, 4, data + 4, 4), Status::kStorageWornOut);
  ASSERT_EQ(flash.read(1, 0, back, 8), Status::kOk);
  EXPECT_EQ(memcmp(back, data, 4), 0);                      // the erase changed nothing
  EXPECT_EQ(count_not(flash, 1, 4, kBlockSize, 0xFF), 0u);  // nor did the program
  EXPECT_EQ(flash.erase(1), Status::kStorageWornOut);       // stays worn
  // Other blocks are fine.
  EXPECT_EQ(flash.erase(2), Status::kOk);
  EXPECT_EQ(flash.prog(2, 0, data, 8), Status::kOk);
  EXPECT_FALSE(flash.worn_out(2));
}

TEST(EmulatedFlash, WornBlockReadsGarbageDeterministically) {
  static uint8_t first_image[kBlockSize * kBlocks];
  for (int run = 0; run < 2; ++run) {
    EmulatedFlash flash;
    Config c = config(4, 0xFF, true);
    c.erase_cycles = 2;
    c.wear_out = WearOut::kReadsGarbage;
    c.garbage_seed = 1234;
    ASSERT_EQ(flash.init(c, g_bytes, g_counts), Status::kOk);
    flash.erase_all();
    uint8_t data[32], back[32];
    fill_pattern(data, sizeof data, 17);
    for (int i = 0; i < 2; ++i) ASSERT_EQ(flash.erase(3), Status::kOk);
    ASSERT_EQ(flash.prog(3, 0, data, 32), Status::kOk);
    ASSERT_EQ(flash.read(3, 0, back, 32), Status::kOk);
    EXPECT_EQ(memcmp(back, data, 32), 0);  // not worn yet
    // The third erase "succeeds" but leaves 1 to 4 bytes not erased.
    ASSERT_EQ(flash.erase(3), Status::kOk);
    EXPECT_TRUE(flash.worn_out(3));
    const uint32_t not_erased = count_not(flash, 3, 0, kBlockSize, 0xFF);
    EXPECT_GE(not_erased, 1u);
    EXPECT_LE(not_erased, 4u);
    // A program "succeeds" but every unit reads back with one bit flipped.
    ASSERT_EQ(flash.erase_count(3), 3u);
    ASSERT_EQ(flash.prog(3, 32, data, 32), Status::kOk);
    ASSERT_EQ(flash.read(3, 32, back, 32), Status::kOk);
    for (uint32_t u = 0; u < 8; ++u) EXPECT_NE(memcmp(back + 4 * u, data + 4 * u, 4), 0) << u;
    EXPECT_EQ(flash.reprogrammed_units(), 0u);  // not judged on a worn block
    if (run == 0) {
      memcpy(first_image, g_bytes, sizeof g_bytes);
    } else {
      EXPECT_EQ(memcmp(first_image, g_bytes, sizeof g_bytes), 0);  // same seed, same garbage
    }
  }
}

// A torn program of `size` bytes at offset 0 of an erased block: a prefix
// of whole units, then at most one unit partly programmed (bits moved only
// toward the data), then erased units. Returns the units written whole.
uint32_t check_torn_program(uint32_t prog_size, uint8_t erase_value, uint64_t tear_seed) {
  EmulatedFlash flash;
  Config c = config(prog_size, erase_value, true);
  EXPECT_EQ(flash.init(c, g_bytes, g_counts), Status::kOk);
  flash.erase_all();
  uint8_t data[kBlockSize];
  fill_pattern(data, sizeof data, static_cast<uint8_t>(tear_seed));
  EXPECT_EQ(flash.prog(0, 0, data, 8 * prog_size), Status::kOk);  // one untorn operation
  flash.cut_power_after(0, tear_seed);                            // the next operation is torn
  EXPECT_EQ(flash.prog(1, 0, data, kBlockSize), Status::kStorageFailure);
  EXPECT_FALSE(flash.powered());
  EXPECT_EQ(flash.flash_operations(), 1u);  // the torn one does not count
  // Dead until the reboot.
  uint8_t byte = 0;
  EXPECT_EQ(flash.read(0, 0, &byte, 1), Status::kStorageFailure);
  EXPECT_EQ(flash.prog(2, 0, data, prog_size), Status::kStorageFailure);
  EXPECT_EQ(flash.erase(2), Status::kStorageFailure);
  flash.restore_power();
  EXPECT_TRUE(flash.powered());
  EXPECT_EQ(flash.read(0, 0, &byte, 1), Status::kOk);
  const uint8_t* block = flash.bytes() + kBlockSize;
  const uint32_t units = kBlockSize / prog_size;
  uint32_t whole = 0;
  while (whole < units &&
         memcmp(block + whole * prog_size, data + whole * prog_size, prog_size) == 0) {
    ++whole;
  }
  for (uint32_t u = whole; u < units; ++u) {
    for (uint32_t i = 0; i < prog_size; ++i) {
      const uint8_t b = block[u * prog_size + i], d = data[u * prog_size + i];
      if (u == whole) {
        // Only bits the program changes may have changed.
        if (erase_value == 0xFF) {
          EXPECT_EQ(b & d, d) << "seed " << tear_seed;
        } else {
          EXPECT_EQ(b | d, d) << "seed " << tear_seed;
        }
      } else {
        EXPECT_EQ(b, erase_value) << "seed " << tear_seed << " unit " << u;
      }
    }
  }
  EXPECT_EQ(count_not(flash, 2, 0, kBlockSize, erase_value), 0u);  // refused while dead
  // After the reboot an erased unit programs again.
  if (whole + 1 < units) {
    EXPECT_EQ(flash.prog(1, (units - 1) * prog_size, data, prog_size), Status::kOk);
  }
  return whole;
}

TEST(EmulatedFlash, TornProgramLeavesAPrefixOfUnitsAndAtMostOneGarbageUnit) {
  for (const uint32_t prog_size : {1u, 8u}) {
    for (const uint8_t erase_value : {uint8_t{0xFF}, uint8_t{0x00}}) {
      uint32_t partial = 0;
      for (uint64_t seed = 1; seed <= 24; ++seed) {
        const uint32_t whole = check_torn_program(prog_size, erase_value, seed);
        if (whole > 0 && whole < kBlockSize / prog_size) ++partial;
      }
      EXPECT_GT(partial, 12u) << "prog_size " << prog_size;  // tears fall inside the call
    }
  }
}

TEST(EmulatedFlash, TornEraseLeavesAPrefixErased) {
  uint32_t partial = 0;
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    EmulatedFlash flash;
    ASSERT_EQ(flash.init(config(1, 0xFF, true), g_bytes, g_counts), Status::kOk);
    memset(g_bytes, 0x00, sizeof g_bytes);  // fully programmed
    flash.cut_power_after(0, seed);
    EXPECT_EQ(flash.erase(2), Status::kStorageFailure);
    EXPECT_EQ(flash.erase(1), Status::kStorageFailure);  // dead
    flash.restore_power();
    EXPECT_EQ(flash.erase_count(2), 1u);  // the torn erase stressed the block
    EXPECT_EQ(flash.erase_count(1), 0u);
    EXPECT_EQ(flash.flash_operations(), 0u);
    const uint8_t* block = flash.bytes() + 2 * kBlockSize;
    uint32_t erased = 0;
    while (erased < kBlockSize && block[erased] == 0xFF) ++erased;
    EXPECT_EQ(count_not(flash, 2, erased, kBlockSize, 0x00), 0u) << "seed " << seed;
    EXPECT_EQ(count_not(flash, 1, 0, kBlockSize, 0x00), 0u);
    if (erased > 0 && erased < kBlockSize) ++partial;
    EXPECT_EQ(flash.erase(2), Status::kOk);
    EXPECT_EQ(count_not(flash, 2, 0, kBlockSize, 0xFF), 0u);
  }
  EXPECT_GT(partial, 12u);
}

TEST(EmulatedFlash, ARefusedProgramTornChangesNothing) {
  EmulatedFlash flash;
  ASSERT_EQ(flash.init(config(8, 0xFF, true), g_bytes, g_counts), Status::kOk);
  flash.erase_all();
  uint8_t data[8];
  fill_pattern(data, sizeof data, 5);
  ASSERT_EQ(flash.prog(0, 0, data, 8), Status::kOk);
  flash.cut_power_after(0, 99);
  const uint8_t other[8] = {};
  EXPECT_EQ(flash.prog(0, 0, other, 8), Status::kStorageFailure);  // not erased, and torn
  EXPECT_FALSE(flash.powered());
  flash.restore_power();
  EXPECT_EQ(memcmp(flash.bytes(), data, 8), 0);
}

TEST(SimPortFlash, DefaultStorageKeepsItsBehaviour) {
  blur::sim::SimPort sim(1);
  const blur::Port port = sim.port();
  EXPECT_EQ(port.block_size, blur::sim::SimPort::kBlockSize);
  EXPECT_EQ(port.block_count, blur::sim::SimPort::kBlockCount);
  EXPECT_EQ(port.prog_size, 1u);
  EXPECT_EQ(port.erase_value, 0xFF);
  EXPECT_TRUE(sim.emulated_flash().config().refuse_second_program);
  const uint8_t a = 0x12;
  ASSERT_EQ(port.prog(port.context, 3, 7, &a, 1), Status::kOk);
  EXPECT_EQ(port.prog(port.context, 3, 7, &a, 1), Status::kStorageFailure);  // not erased
  EXPECT_EQ(sim.reprogrammed_units(), 1u);
  ASSERT_EQ(port.erase(port.context, 3), Status::kOk);
  ASSERT_EQ(port.erase(port.context, 3), Status::kOk);
  EXPECT_EQ(sim.erase_count(3), 2u);
  EXPECT_EQ(sim.max_erase_count(), 2u);
  EXPECT_EQ(sim.storage_operations(), 4u);
  EXPECT_EQ(sim.flash()[3 * blur::sim::SimPort::kBlockSize + 7], 0xFF);
}

TEST(SimPortFlash, ConfiguredStorageGivesItsGeometryToThePort) {
  static uint8_t bytes[256 * 10];
  static uint32_t counts[10];
  blur::flash::Config c = blur::sim::SimPort::default_flash_config(10);
  c.block_size = 256;
  c.prog_size = 8;
  c.erase_value = 0x00;
  c.erase_cycles = 1;
  memset(bytes, 0x77, sizeof bytes);
  blur::sim::SimPort sim(2, c, bytes, counts);
  ASSERT_TRUE(sim.emulated_flash().configured());
  EXPECT_EQ(bytes[2559], 0x00);  // starts erased
  const blur::Port port = sim.port();
  EXPECT_EQ(port.block_size, 256u);
  EXPECT_EQ(port.block_count, 10u);
  EXPECT_EQ(port.prog_size, 8u);
  EXPECT_EQ(port.erase_value, 0x00);
  const uint8_t data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(port.prog(port.context, 9, 4, data, 8), Status::kStorageFailure);
  EXPECT_EQ(sim.misaligned_programs(), 1u);
  ASSERT_EQ(port.erase(port.context, 9), Status::kOk);
  EXPECT_EQ(port.erase(port.context, 9), Status::kStorageWornOut);
  EXPECT_EQ(counts[9], 2u);
}

// (One SimPort per test: they are 3 KiB each and Cortex-M has a 16 KiB stack.)
TEST(SimPortFlash, CallerBufferOfTheDefaultGeometryCountsErases) {
  static uint8_t big[blur::sim::SimPort::kBlockSize * 15];
  blur::sim::SimPort wide(3, big, 15);
  const blur::Port wide_port = wide.port();
  ASSERT_EQ(wide_port.erase(wide_port.context, 14), Status::kOk);
  EXPECT_EQ(wide.erase_count(14), 1u);
  EXPECT_EQ(wide.port().block_count, 15u);
}

TEST(SimPortFlash, InvalidConfigurationFailsEveryStorageCall) {
  static uint8_t bytes[256 * 10];
  static uint32_t counts[10];
  blur::flash::Config c = blur::sim::SimPort::default_flash_config(10);
  c.prog_size = 6;
  blur::sim::SimPort broken(4, c, bytes, counts);
  EXPECT_FALSE(broken.emulated_flash().configured());
  const blur::Port broken_port = broken.port();
  uint8_t byte = 0;
  EXPECT_EQ(broken_port.read(broken_port.context, 0, 0, &byte, 1), Status::kStorageFailure);
  EXPECT_EQ(broken_port.erase(broken_port.context, 0), Status::kStorageFailure);
}

TEST(SimPortFlash, PowerCutTearsThroughThePort) {
  blur::sim::SimPort sim(5);
  const blur::Port port = sim.port();
  sim.cut_power_after(1, 11);
  ASSERT_EQ(port.erase(port.context, 0), Status::kOk);
  EXPECT_EQ(port.erase(port.context, 1), Status::kStorageFailure);
  EXPECT_FALSE(sim.powered());
  EXPECT_EQ(port.sync(port.context), Status::kStorageFailure);
  uint8_t byte = 0;
  EXPECT_EQ(port.read(port.context, 0, 0, &byte, 1), Status::kStorageFailure);
  sim.restore_power();
  EXPECT_EQ(port.read(port.context, 0, 0, &byte, 1), Status::kOk);
  EXPECT_EQ(sim.flash_operations(), 1u);
}

#if defined(BLUR_TEST_BOARD_PORT)
// The QEMU board port's storage is the same emulated flash.
TEST(BoardPortFlash, TakesTheGeometryAndBehavesAsConfigured) {
  static blur::bare_metal::BoardContext board;
  static uint8_t bytes[128 * 3];
  static uint32_t counts[3];
  Config c;
  c.block_size = 128;
  c.block_count = 3;
  c.prog_size = 8;
  c.erase_value = 0x00;
  c.refuse_second_program = true;
  c.erase_cycles = 2;
  const blur::Port port = blur::bare_metal::board_port(&board, bytes, c, counts);
  ASSERT_TRUE(board.flash.configured());
  EXPECT_EQ(port.block_size, 128u);
  EXPECT_EQ(port.block_count, 3u);
  EXPECT_EQ(port.prog_size, 8u);
  EXPECT_EQ(port.erase_value, 0x00);
  EXPECT_EQ(bytes[200], 0x00);  // erased
  const uint8_t data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(port.prog(port.context, 1, 3, data, 8), Status::kStorageFailure);
  EXPECT_EQ(board.flash.misaligned_programs(), 1u);
  ASSERT_EQ(port.prog(port.context, 1, 8, data, 8), Status::kOk);
  EXPECT_EQ(port.prog(port.context, 1, 8, data, 8), Status::kStorageFailure);  // ECC
  uint8_t back[8];
  ASSERT_EQ(port.read(port.context, 1, 8, back, 8), Status::kOk);
  EXPECT_EQ(memcmp(back, data, 8), 0);
  EXPECT_EQ(port.sync(port.context), Status::kOk);
  ASSERT_EQ(port.erase(port.context, 2), Status::kOk);
  ASSERT_EQ(port.erase(port.context, 2), Status::kOk);
  EXPECT_EQ(port.erase(port.context, 2), Status::kStorageWornOut);
  // The old signature: byte-programmable NOR flash erased to 0xFF (ANDs).
  const blur::Port nor = blur::bare_metal::board_port(&board, bytes, 128, 3);
  EXPECT_EQ(nor.prog_size, 1u);
  EXPECT_EQ(nor.erase_value, 0xFF);
  const uint8_t a = 0xF0, b = 0x3C;
  ASSERT_EQ(nor.prog(nor.context, 0, 1, &a, 1), Status::kOk);
  ASSERT_EQ(nor.prog(nor.context, 0, 1, &b, 1), Status::kOk);
  EXPECT_EQ(bytes[1], 0x30);
}
#endif

}  // namespace
