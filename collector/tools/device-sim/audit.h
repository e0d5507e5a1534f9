// The privacy audit: real SDK devices attacked with a fixed statistic.
//
// A case is a metric, two histories h0 and h1 of one device's values and a
// test that flags a device's reports as "h1". N fresh devices (their own
// secrets and DRBG seeds) live each history through the real blur::Client
// (history.h); with k1 of them flagged under h1 and k0 under h0, the
// one-sided Clopper-Pearson bounds give eps_lower = ln(TPR_low / FPR_high)
// (clopper_pearson.h), a lower bound on the loss between h0 and h1 that no
// correct mechanism exceeds but with probability 2 alpha. It is printed
// next to what the ledger charged for each history; tightness = eps_lower /
// charged is how much of the charge this attack gets.
//
// Tests with a score (e.g. how many bits two reports share) pick their
// threshold on the first half of the devices and are counted on the other
// half only, so the bound stays valid (docs/privacy-audit.md).
#ifndef BLUR_TOOLS_DEVICE_SIM_AUDIT_H
#define BLUR_TOOLS_DEVICE_SIM_AUDIT_H

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "history.h"
#include "config/metric_rules.h"
#include "options.h"

namespace blur::sim {

struct AuditCase {
  std::string name;
  std::string metric_spec;  // collector --metric text (parse_metric_spec)
  std::vector<std::string> h0, h1;
  std::string statistic;  // what the test looks at, for the table
  // Higher: more like h1. A device is flagged when score >= the threshold.
  std::function<double(const collector::MetricConfig&, const DeviceHistory&)> score;
  // A power check: the attack must reach at least this (0: none), showing
  // the statistic detects what the charge allows.
  double min_epsilon_lower = 0;
};

struct AuditResult {
  std::string name, statistic;
  uint64_t devices;                // per history (half of them counted for scored tests)
  uint64_t flagged_h0, flagged_h1, counted;
  double threshold;
  double epsilon_lower;            // -inf: never flagged under h1
  uint64_t charged_h0, charged_h1;  // micro-nats, the largest over the devices
  bool charges_equal;              // every device of both histories spent the same
  double min_epsilon_lower;
};

// The cases: the short form (CI) or the long one (docs/privacy-audit.md).
std::vector<AuditCase> audit_cases(bool long_form);
AuditResult run_audit_case(const AuditCase& audit_case, uint64_t devices, uint64_t seed,
                           double alpha);
// Holds: eps_lower <= what either history was charged, every charge equal
// across values, and the power check met.
bool audit_holds(const AuditResult& result);

// `blur-device-sim audit`: runs the cases, prints the table (markdown with
// --markdown), exits 1 if any case does not hold.
int audit(const Options& o, bool long_form, double alpha, const std::string& only,
          const std::string& markdown_path);

}  // namespace blur::sim

#endif  // BLUR_TOOLS_DEVICE_SIM_AUDIT_H
