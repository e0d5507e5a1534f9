/* A device for the C API tests, written in C as an app would: RAM flash
 * behind a blur_port with flash rules (programming a byte that is not
 * erased fails), a chosen erased value and program unit (a prog call off
 * the unit is refused and counted), an optional monotonic counter that
 * survives restoring an old flash image, and deterministic entropy. */
#ifndef BLUR_TESTS_RAM_PORT_H
#define BLUR_TESTS_RAM_PORT_H

#include <stddef.h>
#include <stdint.h>

#include "blur/blur.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { RAM_PORT_BLOCK_SIZE = 512, RAM_PORT_MAX_BLOCKS = 12 };

typedef struct ram_port {
  uint8_t flash[RAM_PORT_BLOCK_SIZE * RAM_PORT_MAX_BLOCKS];
  uint32_t block_count;
  uint8_t erased;         /* 0xFF or 0x00 */
  uint32_t prog_size;     /* the unit prog calls must respect (1: any) */
  uint64_t entropy_state; /* SplitMix64 */
  int counter_enabled;
  uint64_t counter;
  int counter_fails;
  uint32_t programs;            /* prog calls */
  uint32_t misaligned_programs; /* prog calls refused for breaking the unit */
} ram_port;

/* Blank flash of `block_count` blocks erased to `erased`, unit 1, no counter. */
void ram_port_init(ram_port* ram, uint32_t block_count, uint8_t erased, uint64_t seed);

/* The callbacks over `ram`, with the counter if enabled, prog_size and
 * erased_zero as configured; every other field zero (the defaults). */
blur_port ram_port_port(ram_port* ram);

#ifdef __cplusplus
}
#endif

#endif /* BLUR_TESTS_RAM_PORT_H */
