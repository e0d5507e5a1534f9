// blur-device-sim fleet: N simulated devices (blur::Client each), their
// reports delivered to a collector over HTTP(S) or, --offline, through the
// collector's decode -> validate -> estimate path in process.
#ifndef BLUR_TOOLS_DEVICE_SIM_FLEET_H
#define BLUR_TOOLS_DEVICE_SIM_FLEET_H

#include <iostream>

#include "options.h"

namespace blur::sim {

// The process exit status: 0 when every report was acknowledged and the
// collector's counts add up, 1 when a device failed, 2 for a set-up error.
// A pem metric's devices record the words of --values. The summary (the
// delivery counts, or --offline the estimate) goes to `summary`.
int fleet(const Options& o, std::ostream& summary = std::cout);

}  // namespace blur::sim

#endif  // BLUR_TOOLS_DEVICE_SIM_FLEET_H
