// Blur's changes to mbedTLS's default configuration for hosts and Linux
// devices (x86-64, aarch64): the full library, TLS included, but the same
// entropy chain as the device build (blur_mbedtls_config.h), so the SDK's
// DRBG produces the same bytes for the same seed everywhere:
//   - no default entropy sources (platform, hardware clock): the SDK's
//     entropy port is the only one;
//   - the SHA-256 entropy accumulator (the default would be SHA-512).
#ifndef BLUR_MBEDTLS_HOST_H
#define BLUR_MBEDTLS_HOST_H

#define MBEDTLS_NO_PLATFORM_ENTROPY
#define MBEDTLS_NO_DEFAULT_ENTROPY_SOURCES
#define MBEDTLS_ENTROPY_FORCE_SHA256

#endif  // BLUR_MBEDTLS_HOST_H
