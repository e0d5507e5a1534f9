// A simulated device: the real SDK (CTR_DRBG, persisted ledger, exact
// mechanisms, nanopb encoding) on the sim port (seeded entropy, RAM flash).
#ifndef BLUR_EXAMPLES_FLEET_SIM_SIMULATED_DEVICE_H
#define BLUR_EXAMPLES_FLEET_SIM_SIMULATED_DEVICE_H

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "blur/binary_randomized_response.h"
#include "blur/discrete_laplace.h"
#include "blur/generalized_randomized_response.h"
#include "blur/hadamard_response.h"
#include "blur/ledger.h"
#include "blur/local_hashing.h"
#include "blur/one_bit_mean.h"
#include "blur/rappor.h"
#include "blur/report.h"
#include "blur/rng.h"
#include "blur/unary_encoding.h"
#include "ingest/batch.h"
#include "metrics/metric_config.h"
#include "sim_port.h"

namespace blur::sim {

// The device-side mechanism for a metric configuration.
using DeviceMechanism =
    std::variant<BinaryRandomizedResponse, GeneralizedRandomizedResponse, UnaryEncoding,
                 DiscreteLaplace, OneBitMean, HadamardResponse, LocalHashing, Rappor>;
Result<DeviceMechanism> device_mechanism(const collector::MetricConfig& metric);
EpsilonMicros epsilon_charged(const DeviceMechanism& mechanism);
// One randomization, without a ledger (for measuring the randomizer).
Status randomize(const DeviceMechanism& mechanism, Rng& rng, uint32_t value, ReportPayload* out);
// A payload as the collector's decoder would deliver it for `metric`.
collector::IncomingReport as_incoming(const ReportPayload& payload,
                                      const collector::MetricConfig& metric);

// Device i of a fleet seeded with `fleet_seed`: distinct, reproducible.
uint64_t device_seed(uint64_t fleet_seed, uint64_t index);

class SimulatedDevice {
 public:
  explicit SimulatedDevice(uint64_t seed) : port_(seed) {}

  // Seeds the DRBG (personalized with `name`) and provisions the ledger.
  Status boot(const std::string& name, uint64_t budget_micros);
  // Charges, randomizes and encodes one report as a one-report batch.
  Status report_batch(const DeviceMechanism& mechanism, uint32_t metric_id, uint32_t value,
                      std::string* batch);
  Rng& rng() { return rng_; }

 private:
  SimPort port_;
  Rng rng_;
  Ledger ledger_;
};

}  // namespace blur::sim

#endif  // BLUR_EXAMPLES_FLEET_SIM_SIMULATED_DEVICE_H
