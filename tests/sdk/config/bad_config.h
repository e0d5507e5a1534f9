/* An inconsistent configuration for check_config.h's test: reached only
 * through BLUR_CONFIG_FILE. */
#define BLUR_LEDGER_BLOCKS 1
