/* Compiled alone (C or C++) by the sdk.config.* tests: config.h with the
 * knobs given on the command line, checked by check_config.h. */
#include "blur/config.h"

int blur_config_probe = BLUR_CLIENT_MEMORY_SIZE;
