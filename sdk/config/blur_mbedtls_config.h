// Blur's mbedTLS 2.28 configuration: the smallest set the SDK needs, the
// same on every target (host, Cortex-M, aarch64).
//
//   entropy (SHA-256 accumulator) -> CTR_DRBG (AES-256) -> SDK's Rng
//
// None of these modules allocates: CTR_DRBG holds its AES context inline and
// the entropy accumulator uses SHA-256 directly (HMAC_DRBG would go through
// the MD layer, whose setup calls calloc). No platform entropy is compiled:
// the one strong source is the SDK's entropy port, added at runtime.
#ifndef BLUR_MBEDTLS_CONFIG_H
#define BLUR_MBEDTLS_CONFIG_H

#define MBEDTLS_AES_C
#define MBEDTLS_AES_ROM_TABLES    // tables in flash, not RAM
#define MBEDTLS_AES_FEWER_TABLES  // 2 KiB of tables instead of 8 KiB
// CTR_DRBG only encrypts: AES decryption (its code, inverse table and
// inverse S-box, 2.1 KB of flash) is replaced by blur_aes_decrypt_refused.c.
#define MBEDTLS_AES_DECRYPT_ALT
#define MBEDTLS_CTR_DRBG_C
#define MBEDTLS_ENTROPY_C
#define MBEDTLS_SHA256_C
#define MBEDTLS_SHA256_SMALLER  // fewer unrolled rounds: smaller flash

// x86-64 hosts (simulators, benchmarks, the collector's tests): AES-NI with
// a CPUID check at run time, software AES otherwise. Output is identical.
#if defined(__x86_64__)
#define MBEDTLS_HAVE_ASM
#define MBEDTLS_AESNI_C
#endif

#define MBEDTLS_NO_PLATFORM_ENTROPY  // the port supplies entropy
#define MBEDTLS_ENTROPY_MAX_SOURCES 2
#define MBEDTLS_ENTROPY_FORCE_SHA256

#include "mbedtls/check_config.h"

#endif  // BLUR_MBEDTLS_CONFIG_H
