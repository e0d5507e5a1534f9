/* Placeholder until the configuration header lands: the largest program unit. */
#ifndef BLUR_CONFIG_H
#define BLUR_CONFIG_H
#ifndef BLUR_MAX_PROG_SIZE
#define BLUR_MAX_PROG_SIZE 256
#endif
#endif
