// The device configuration sets MBEDTLS_AES_DECRYPT_ALT: nothing on the
// device decrypts (CTR_DRBG runs AES forwards only), so mbedTLS's decryption
// and its tables are left out and this refusal links in their place.
#include "mbedtls/aes.h"
#include "mbedtls/platform.h"
#include "mbedtls/platform_util.h"

int mbedtls_internal_aes_decrypt(mbedtls_aes_context* ctx, const unsigned char input[16],
                                 unsigned char output[16]) {
  (void)ctx;
  (void)input;
  mbedtls_platform_zeroize(output, 16);
  return MBEDTLS_ERR_PLATFORM_FEATURE_UNSUPPORTED;
}
