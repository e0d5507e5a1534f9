#include "ram_port.h"

#include <string.h>

static int ram_entropy(void* context, uint8_t* out, size_t length) {
  ram_port* ram = context;
  for (size_t i = 0; i < length; ++i) {
    uint64_t z = (ram->entropy_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    out[i] = (uint8_t)(z ^ (z >> 31));
  }
  return 0;
}

static int in_range(const ram_port* ram, uint32_t block, uint32_t offset, uint32_t size) {
  return block < ram->block_count && offset <= RAM_PORT_BLOCK_SIZE &&
         size <= RAM_PORT_BLOCK_SIZE - offset;
}

static int ram_read(void* context, uint32_t block, uint32_t offset, uint8_t* out, uint32_t size) {
  const ram_port* ram = context;
  if (!in_range(ram, block, offset, size)) return -1;
  memcpy(out, ram->flash + (size_t)block * RAM_PORT_BLOCK_SIZE + offset, size);
  return 0;
}

static int ram_prog(void* context, uint32_t block, uint32_t offset, const uint8_t* data,
                    uint32_t size) {
  ram_port* ram = context;
  ++ram->programs;
  if (!in_range(ram, block, offset, size)) return -1;
  if (offset % ram->prog_size != 0 || size % ram->prog_size != 0) {
    ++ram->misaligned_programs; /* ECC flash refuses a partial word */
    return -1;
  }
  uint8_t* at = ram->flash + (size_t)block * RAM_PORT_BLOCK_SIZE + offset;
  for (uint32_t i = 0; i < size; ++i) {
    if (at[i] != ram->erased) return -1;
  }
  memcpy(at, data, size);
  return 0;
}

static int ram_erase(void* context, uint32_t block) {
  ram_port* ram = context;
  if (block >= ram->block_count) return -1;
  memset(ram->flash + (size_t)block * RAM_PORT_BLOCK_SIZE, ram->erased, RAM_PORT_BLOCK_SIZE);
  return 0;
}

static int ram_sync(void* context) {
  (void)context;
  return 0;
}

static int ram_counter_read(void* context, uint64_t* value) {
  const ram_port* ram = context;
  if (ram->counter_fails) return -1;
  *value = ram->counter;
  return 0;
}

static int ram_counter_advance(void* context, uint64_t value) {
  ram_port* ram = context;
  if (ram->counter_fails) return -1;
  if (value > ram->counter) ram->counter = value;
  return 0;
}

void ram_port_init(ram_port* ram, uint32_t block_count, uint8_t erased, uint64_t seed) {
  memset(ram, 0, sizeof *ram);
  ram->block_count = block_count <= RAM_PORT_MAX_BLOCKS ? block_count : RAM_PORT_MAX_BLOCKS;
  ram->erased = erased;
  ram->prog_size = 1;
  ram->entropy_state = seed;
  memset(ram->flash, erased, sizeof ram->flash);
}

blur_port ram_port_port(ram_port* ram) {
  blur_port port = {.context = ram,
                    .entropy = ram_entropy,
                    .read = ram_read,
                    .prog = ram_prog,
                    .erase = ram_erase,
                    .sync = ram_sync,
                    .block_size = RAM_PORT_BLOCK_SIZE,
                    .block_count = ram->block_count};
  if (ram->counter_enabled) {
    port.counter_read = ram_counter_read;
    port.counter_advance = ram_counter_advance;
  }
  port.prog_size = ram->prog_size == 1 ? 0 : ram->prog_size; /* 0: the default, 1 */
  port.erased_zero = ram->erased == 0x00;
  return port;
}
