/* Refuses inconsistent knob values of config.h at compile time, each with
 * the reason, rather than as a static_assert deep in the SDK or as a store
 * that fails at run time. Included by config.h only. */
#ifndef BLUR_CHECK_CONFIG_H
#define BLUR_CHECK_CONFIG_H

#ifndef BLUR_CONFIG_H
#error "include blur/config.h, not blur/check_config.h"
#endif

/* Ledger: LedgerPolicy and the record have arrays of these sizes. */
#if BLUR_LEDGER_MAX_METRICS < 1
#error "BLUR_LEDGER_MAX_METRICS must be at least 1"
#endif
#if BLUR_LEDGER_MAX_MEMO_VALUES < 1
#error "BLUR_LEDGER_MAX_MEMO_VALUES must be at least 1 (1 when no metric is memoized)"
#endif
/* A snapshot stores its capacities, and ledger.cpp reads one with more
 * than 1024 slots of either kind as invalid (kMaxStoredSlots). */
#define BLUR_LEDGER_SLOT_LIMIT 1024
#if BLUR_LEDGER_MAX_METRICS > BLUR_LEDGER_SLOT_LIMIT || \
    BLUR_LEDGER_MAX_MEMO_VALUES > BLUR_LEDGER_SLOT_LIMIT
#error "BLUR_LEDGER_MAX_METRICS and BLUR_LEDGER_MAX_MEMO_VALUES must be at most 1024"
#endif
/* The ledger's log needs a second block to move to. */
#if BLUR_LEDGER_BLOCKS < 2
#error "BLUR_LEDGER_BLOCKS must be at least 2"
#endif

/* The staging buffer holds at least one program unit; units are powers of
 * two (flash_write.h). */
#if BLUR_MAX_PROG_SIZE < 1 || BLUR_MAX_PROG_SIZE > 256 || \
    (BLUR_MAX_PROG_SIZE & (BLUR_MAX_PROG_SIZE - 1)) != 0
#error "BLUR_MAX_PROG_SIZE must be a power of two from 1 to 256"
#endif

/* A bit vector is at least one byte (the smallest domain, 2, needs 2 bits)
 * and at most what blur.options lets nanopb encode. */
#if BLUR_MAX_BIT_VECTOR_BYTES < 1 || BLUR_MAX_BIT_VECTOR_BYTES > 512
#error "BLUR_MAX_BIT_VECTOR_BYTES must be from 1 to 512 (blur.options' Report.bits max_size)"
#endif

#if BLUR_MAX_CLIENT_METRICS < 1
#error "BLUR_MAX_CLIENT_METRICS must be at least 1"
#endif

#if BLUR_MECHANISM_SET == 0
#error "BLUR_MECHANISM_SET is empty: a Client needs at least one mechanism"
#endif
#if (BLUR_MECHANISM_SET & ~BLUR_ALL_MECHANISMS_) != 0
#error "BLUR_MECHANISM_SET has a bit that is no mechanism id of mechanism_table.h"
#endif
/* The Client's RAPPOR (mechanism id 10) uses the default 256-bit Bloom
 * filter, 32 bytes. An explicit set only: the default set is also what
 * non-Client code compiles with. */
#if (BLUR_MECHANISM_SET & (1u << 10)) != 0 && BLUR_MAX_BIT_VECTOR_BYTES < 32 && \
    BLUR_MECHANISM_SET != BLUR_ALL_MECHANISMS_
#error "rappor is in BLUR_MECHANISM_SET: BLUR_MAX_BIT_VECTOR_BYTES must be at least 32"
#endif

#if BLUR_MEMOIZATION != 0 && BLUR_MEMOIZATION != 1
#error "BLUR_MEMOIZATION must be 0 or 1"
#endif
#if BLUR_OBSERVED_TIME != 0 && BLUR_OBSERVED_TIME != 1
#error "BLUR_OBSERVED_TIME must be 0 or 1"
#endif

/* blur.h derives it: a second definition would silently disagree. */
#if defined(BLUR_MAX_METRICS)
#error "BLUR_MAX_METRICS is not a knob: set BLUR_MAX_CLIENT_METRICS (and BLUR_LEDGER_MAX_METRICS)"
#endif

#endif /* BLUR_CHECK_CONFIG_H */
