// blur-device-sim load: a load generator for the collector's ingest. Builds
// a pool of batches with real SDK devices (blur::Client), then POSTs them
// for --duration seconds over --connections keep-alive connections from one
// thread (http_load.h), each request with a device nonce never sent before:
// nonces derive from the run's seed, fresh from the OS unless --seed.
#ifndef BLUR_TOOLS_DEVICE_SIM_LOAD_GENERATOR_H
#define BLUR_TOOLS_DEVICE_SIM_LOAD_GENERATOR_H

#include <cstddef>
#include <cstdint>
#include <string>

#include "options.h"

namespace blur::sim {

// Exit status: 0 if every request was answered 200, 1 otherwise, 2 for a
// set-up error.
int load(Options o);

}  // namespace blur::sim

#endif  // BLUR_TOOLS_DEVICE_SIM_LOAD_GENERATOR_H
