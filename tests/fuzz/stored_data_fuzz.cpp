// The collector's parsers of bytes it did not produce in this process:
// stored aggregates and raw payloads (a database row may be corrupt or
// written by another version), stored metric configurations, the metrics
// file, and time parameters. Each must refuse bad input with an error,
// never crash, loop or read out of bounds; what it accepts must survive a
// round trip.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "aggregate/aggregate.h"
#include "aggregate/payload.h"
#include "config/metric_rules.h"
#include "config/metrics_file.h"
#include "util/time_text.h"

namespace {

using namespace blur::collector;

MetricConfig metric_for(uint8_t selector) {
  static const MechanismId kIds[] = {
#define BLUR_X(id, Cpp, name, C, PROTO, Payload, max_domain) MechanismId::k##Cpp,
      BLUR_MECHANISM_TABLE(BLUR_X)
#undef BLUR_X
  };
  MetricConfig m;
  m.id = 1;
  m.mechanism = kIds[selector % (sizeof kIds / sizeof kIds[0])];
  m.epsilon_micros = 1000000;
  m.domain_size = m.mechanism == MechanismId::kBinaryRandomizedResponse ? 2 : 20;
  if (m.mechanism == MechanismId::kPrefixExtension) {
    m.domain_size = 10;       // words of up to 10 characters: 9 levels
    m.epsilon_micros = 4000000;  // 64 buckets: the tally is sparse (9.4 M cells)
  }
  m.rappor = {64, 2, 4};
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  const MetricConfig metric = metric_for(data[1]);
  switch (data[0] % 5) {
    case 0: {
      auto aggregate = Aggregate::deserialize(metric, rest);
      if (aggregate) {
        auto again = Aggregate::deserialize(metric, aggregate->serialize());
        if (!again || again->serialize() != aggregate->serialize()) __builtin_trap();
        if (!aggregate->numeric()) (void)aggregate->support_counts();
      }
      break;
    }
    case 1: {
      IncomingReport report;
      if (unflatten_payload(metric, rest, &report)) {
        if (flatten_payload(report) != rest) __builtin_trap();
        Aggregate aggregate(metric);  // what a stored report reaches: its tally cell
        aggregate.add(report);
        if (aggregate.reports() != 1) __builtin_trap();
      }
      break;
    }
    case 2: {
      auto config = config_from_text(std::string(rest));
      if (config) {
        auto again = config_from_text(config_to_text(config.value()));
        if (!again || !(again.value() == config.value())) __builtin_trap();
      }
      break;
    }
    case 3:
      (void)parse_metrics_toml(std::string(rest), "fuzz.toml");
      break;
    case 4: {
      const auto t = parse_time(rest);
      if (t && *t > -62135596800 && *t < 253402300800) {  // years 1..9999
        const auto back = parse_time(format_time(*t));
        if (!back || *back != *t) __builtin_trap();
      }
      break;
    }
  }
  return 0;
}
