/* A device's own configuration (BLUR_CONFIG_FILE): fewer metrics. */
#define BLUR_MAX_CLIENT_METRICS 2
#define BLUR_LEDGER_MAX_METRICS 2
