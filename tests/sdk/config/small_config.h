/* A small device's configuration (BLUR_CONFIG_FILE of small_config_test):
 * every capacity below its default, so the test sees each take effect. */
#define BLUR_LEDGER_MAX_METRICS 4
#define BLUR_LEDGER_MAX_MEMO_VALUES 4
#define BLUR_LEDGER_BLOCKS 3
#define BLUR_MAX_PROG_SIZE 32
#define BLUR_MAX_BIT_VECTOR_BYTES 32
#define BLUR_MAX_CLIENT_METRICS 3
/* rr, grr, sue, oue (mechanism ids 1-4) */
#define BLUR_MECHANISM_SET ((1u << 1) | (1u << 2) | (1u << 3) | (1u << 4))
