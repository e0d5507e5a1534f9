// blur-device-sim discover: word discovery end to end. Every line of
// --values is one device's word; each device is a blur::Client recording it
// with the discovery mechanism, and (--offline) the collector's decode ->
// validate -> count path and its word discovery run in process:
//
//   blur-device-sim discover --mechanism pem --epsilon 4 --values words.txt --top-k 10 --seed 1 --offline
//
// prints {"n", "epsilon_charged", "max_length", "top_k", "decode_seconds",
// "words": [{"word", "estimate", "stderr", "ci95": [lo, hi]}, ...]} with
// the words in decreasing estimate order. Without --offline the devices
// send to --collector (metric --metric, registered there as pem with the
// same epsilon and longest word), as the fleet command does, and the
// collector's estimate (GET /v1/metrics/ID/estimate?top_k=K) is printed.
#ifndef BLUR_TOOLS_DEVICE_SIM_DISCOVER_H
#define BLUR_TOOLS_DEVICE_SIM_DISCOVER_H

#include "options.h"

namespace blur::sim {

// The process exit status: 0 on success, 2 for a set-up error (unreadable
// or invalid words, a metric the SDK refuses), 1 when a device failed.
int discover(const Options& o);

}  // namespace blur::sim

#endif  // BLUR_TOOLS_DEVICE_SIM_DISCOVER_H
