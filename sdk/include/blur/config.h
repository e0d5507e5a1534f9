/* Every compile-time knob of the SDK, with its default and its cost.
 *
 * Override any of them in a header of your own and name it with
 * BLUR_CONFIG_FILE (CMake: -DBLUR_CONFIG_FILE=/path/my_blur_config.h; by
 * hand: -DBLUR_CONFIG_FILE='"my_blur_config.h"'), which is included first;
 * or with -D (blur_client_library() does that for the mechanism set). Set
 * one knob one way only: a -D and a #define of the same name in the file
 * conflict (a redefinition warning; an error under -Werror). The knobs
 * size the SDK's objects and its storage records, so everything that
 * includes an SDK header in one program must see the same values: set them
 * for the whole build, never per file. check_config.h (included last)
 * refuses inconsistent values.
 *
 * Plain C preprocessor (the C API, blur.h, includes it). */
#ifndef BLUR_CONFIG_H
#define BLUR_CONFIG_H

#if defined(BLUR_CONFIG_FILE)
#include BLUR_CONFIG_FILE
#endif

#include "blur/mechanisms/mechanism_table.h"

/* ---- Ledger (ledger.h). Its snapshot is 128 + 24 x metrics + 8 x memo
 * values bytes and must fit one erase block with its CRC unit; what is left
 * holds the charges' entries (docs/storage.md: wear). A snapshot written
 * with other capacities is read and continued when it fits. ---- */

/* Metrics with their own budget cap (LedgerPolicy, blur_policy), up to
 * 1024. Each costs 24 B of every snapshot on flash, 24 B of RAM in the
 * Ledger and 24 B of stack while charging; raise it for more separately
 * capped metrics. */
#ifndef BLUR_LEDGER_MAX_METRICS
#define BLUR_LEDGER_MAX_METRICS 8
#endif

/* Distinct (metric, value) pairs of memoized reports whose longitudinal
 * epsilon the ledger remembers, up to 1024; a new pair beyond it is refused
 * (kMemoTableFull). Each costs 8 B of every snapshot, of RAM and of stack
 * while charging; raise it for memoized metrics with many values, lower it
 * (to 1) without memoization. */
#ifndef BLUR_LEDGER_MAX_MEMO_VALUES
#define BLUR_LEDGER_MAX_MEMO_VALUES 16
#endif

/* Blocks of the ledger's partition in Client::open(port) and blur_open()
 * (the report queue gets the others). At least 2. The ledger's log moves
 * round robin through them, so each block added spreads its erases
 * further: raise it for devices that charge often (docs/storage.md). */
#ifndef BLUR_LEDGER_BLOCKS
#define BLUR_LEDGER_BLOCKS 2
#endif

/* ---- Storage (port.h) ---- */

/* The largest program unit (Port::prog_size) a port may declare, in bytes:
 * a power of two from 1 to 256; larger units are refused at open. It sizes
 * the record writer's staging buffer, max(32, it) bytes of stack while
 * writing: lower it to your flash's unit (8 on STM32L4) to save 224 B. */
#ifndef BLUR_MAX_PROG_SIZE
#define BLUR_MAX_PROG_SIZE 256
#endif

/* ---- Reports (report_payload.h, report_encoding.h) ---- */

/* The largest bit-vector payload (unary encodings, RAPPOR's Bloom filter),
 * in bytes, 1 to 512 (blur.options' max_size). The Client holds two
 * buffers of it (the report and its encoding): without sue/oue/rappor, 4
 * saves about 1 KB of RAM. Unary encodings then accept domains up to 8x it,
 * RAPPOR's default 256-bit filter needs 32. */
#ifndef BLUR_MAX_BIT_VECTOR_BYTES
#define BLUR_MAX_BIT_VECTOR_BYTES 512
#endif

/* ---- The Client and the C API (client.h, blur.h) ---- */

/* Metrics one Client can configure (add_metric, blur_add_metric); each
 * costs 96 B of RAM in the Client. */
#ifndef BLUR_MAX_CLIENT_METRICS
#define BLUR_MAX_CLIENT_METRICS 8
#endif

/* The mechanisms the Client compiles in: bit i for mechanism id i of
 * mechanism_table.h (default: all). Each one left out saves its code, 1 to
 * 2.2 KB of flash on Cortex-M4 (docs/mechanisms.md); add_metric then
 * answers kNotBuilt. Usually set per client library, by
 * blur_client_library(<target> MECHANISMS ...). */
#define BLUR_MECHANISM_BIT_(id, Cpp, name, C, PROTO, Payload, max_domain) | (1u << id)
#define BLUR_ALL_MECHANISMS_ (0u BLUR_MECHANISM_TABLE(BLUR_MECHANISM_BIT_))
#ifndef BLUR_MECHANISM_SET
#define BLUR_MECHANISM_SET BLUR_ALL_MECHANISMS_
#endif

/* 1: memoized metrics (a longitudinal epsilon: sue, rappor, onebit) are
 * compiled into the Client; 0 saves their code (blur_client_library's
 * NO_MEMOIZATION). */
#ifndef BLUR_MEMOIZATION
#define BLUR_MEMOIZATION 1
#endif

/* 1: the Client stamps each report with the port clock's minute, so the
 * collector buckets it by when it was recorded; 0 saves about 80 B of
 * flash and the collector uses the receive time (NO_OBSERVED_TIME). */
#ifndef BLUR_OBSERVED_TIME
#define BLUR_OBSERVED_TIME 1
#endif

/* The bytes of memory blur_open() needs for one client (the C API's
 * blur_client). Derived from the knobs above, with room for a 64-bit
 * host's larger DRBG context and pointers; c_api.cpp checks at compile
 * time that the client fits. The defaults give 5,184 B for a client of
 * 4,328 B (x86-64) or 3,352 B (Cortex-M4): set it nearer to your target's
 * size to save the rest. */
#ifndef BLUR_CLIENT_MEMORY_SIZE
#define BLUR_CLIENT_MEMORY_SIZE                                                \
  (3072 + 24 * (BLUR_LEDGER_MAX_METRICS) + 8 * (BLUR_LEDGER_MAX_MEMO_VALUES) + \
   96 * (BLUR_MAX_CLIENT_METRICS) + 2 * (BLUR_MAX_BIT_VECTOR_BYTES))
#endif

#include "blur/check_config.h"

#endif /* BLUR_CONFIG_H */
