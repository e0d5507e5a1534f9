// blur-device-sim: simulated devices running the real Blur SDK.
//
//   blur-device-sim randomize --mechanism grr --epsilon 1 --domain 16 --input 3 --count 100000
//   blur-device-sim fleet --mechanism rr --epsilon 1 --devices 20000 --true-rate 0.3 --offline
//   blur-device-sim fleet --collector http://127.0.0.1:8080 --metric 1 ... [--table]
//   blur-device-sim discover --mechanism pem --epsilon 4 --values words.txt --top-k 10 --offline
//   blur-device-sim suggest --model model.blnw --prompt "you will be"
//   blur-device-sim load --collector http://127.0.0.1:8080 --metric 1 --duration 10
//   blur-device-sim history --metric-spec 1:loloha:0.5:16:longitudinal=2 --values 3,3,5 --devices 1000 --out h.jsonl
//   blur-device-sim audit [--long] [--devices N] [--markdown FILE]
#include <CLI/CLI.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "audit.h"
#include "api/metric_estimate.h"
#include "estimate/numeric_estimate.h"
#include "mechanisms/mechanism_spec.h"  // mechanism_names
#include "discover.h"
#include "enrollment.h"
#include "fleet.h"
#include "history.h"
#include "load_generator.h"
#include "options.h"
#include "simulated_device.h"
#include "suggest.h"

namespace {

using blur::sim::fail;
using blur::sim::Options;

// One device's randomizer alone (no ledger, no queue), N times on one
// input: what this command measures is the randomizer itself.
int randomize(Options o) {
  std::string error;
  const auto metric = blur::sim::metric_of(o, &error);
  if (!metric) return fail(error);
  if (o.input >= metric->domain_size) return fail("--input must be in [0, --domain)");
  const auto mechanism = blur::sim::device_mechanism(*metric);
  if (!mechanism.ok()) return fail(blur::status_name(mechanism.status()));
  if (!blur::sim::resolve_seed(&o, &error)) return fail(error);
  blur::sim::SimPort port(o.seed);
  blur::Rng rng;
  static const uint8_t kName[] = "blur-device-sim/randomize";
  if (rng.seed(port.port(), kName, sizeof kName - 1) != blur::Status::kOk) {
    return fail("cannot seed the DRBG");
  }
  // Counted by the collector's own aggregation, from the decoder's form.
  blur::collector::Aggregate aggregate(*metric);
  static blur::ReportPayload payload;
  for (uint64_t i = 0; i < o.count; ++i) {
    const blur::Status status = blur::sim::randomize(mechanism.value(), rng, o.input, &payload);
    if (status != blur::Status::kOk) return fail(blur::status_name(status));
    aggregate.add(blur::sim::as_incoming(payload, *metric));
  }
  const blur::EpsilonMicros charged = blur::sim::epsilon_charged(mechanism.value());
  nlohmann::json out{{"mechanism", o.mechanism},
                     {"epsilon_charged", charged / 1e6},
                     {"epsilon_charged_micros", charged},
                     {"domain", metric->domain_size},
                     {"input", o.input},
                     {"count", o.count}};
  if (!aggregate.numeric()) {
    out["support"] = aggregate.support_counts();
  } else {
    nlohmann::json histogram = nlohmann::json::object();
    for (const auto& [value, count] : aggregate.summary().histogram()) {
      histogram[std::to_string(value)] = count;
    }
    out["histogram"] = histogram;
    out["grid_step"] = 1;
  }
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"blur-device-sim: simulated devices running the real Blur SDK"};
  app.require_subcommand(1);
  Options o;
  std::vector<CLI::Option*> seeds;
  auto common = [&](CLI::App* cmd) {
    cmd->add_option("--mechanism", o.mechanism, "One of: " + blur::collector::mechanism_names())
        ->capture_default_str();
    cmd->add_option("--epsilon", o.epsilon, "Epsilon per report, in nats")->capture_default_str();
    cmd->add_option("--longitudinal", o.longitudinal,
                    "Memoized metrics (loloha needs it; sue, rappor, onebit may have it): the "
                    "permanent response's epsilon, in nats; each report charges --epsilon");
    cmd->add_option("--domain", o.domain, "Number of possible values (rr: 2)")
        ->capture_default_str();
    seeds.push_back(cmd->add_option(
        "--seed", o.seed,
        "Seed of the simulated entropy and generated values (default: fresh from the OS, "
        "printed to stderr)"));
  };
  auto collector = [&](CLI::App* cmd) {
    cmd->add_option("--collector", o.collector, "Collector base URL")->capture_default_str();
    cmd->add_option("--metric", o.metric, "Metric id (registered on the collector)")
        ->capture_default_str();
    cmd->add_option("--enrollment-secret-file", o.enrollment_secret_file,
                    "The app's enrollment secret: devices enroll with it (default: "
                    "$BLUR_ENROLLMENT_SECRET; neither: a --no-auth collector)")
        ->check(CLI::ExistingFile);
    cmd->add_option("--reader-token-file", o.reader_token_file,
                    "A reader token, for reading estimates (default: $BLUR_READER_TOKEN)")
        ->check(CLI::ExistingFile);
  };
  auto* randomize_cmd = app.add_subcommand("randomize",
                                           "Run one device's randomizer N times on one input; "
                                           "print the support counts as JSON");
  common(randomize_cmd);
  randomize_cmd->add_option("--input", o.input, "The true value")->capture_default_str();
  randomize_cmd->add_option("--count", o.count, "How many reports")->capture_default_str();

  auto* fleet_cmd = app.add_subcommand(
      "fleet",
      "Simulate a fleet: each device a blur::Client that records its value and sends "
      "its queue until acknowledged");
  common(fleet_cmd);
  collector(fleet_cmd);
  fleet_cmd->add_flag("--offline", o.offline,
                      "Estimate in process (decode, validate, estimate) and print JSON");
  fleet_cmd->add_option("--ca", o.ca_file, "PEM CA that signed an https:// collector's certificate")
      ->check(CLI::ExistingFile);
  fleet_cmd->add_option("--devices", o.devices, "Number of generated devices")
      ->check(CLI::Range(uint64_t{1}, uint64_t{100000000}))
      ->capture_default_str();
  fleet_cmd->add_option("--reports", o.reports, "Reports per device (each of its value)")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  fleet_cmd->add_option("--true-rate", o.true_rate, "rr: share of generated devices holding 1")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  fleet_cmd
      ->add_option("--spread-hours", o.spread_hours,
                   "Set device i's clock to (i mod H) hours before now, so that the reports "
                   "spread over the last H hours' buckets (0: the simulator's fixed clock, "
                   "which the collector finds implausible and replaces by the receive time)")
      ->check(CLI::Range(0u, 24u * 365u))
      ->capture_default_str();
  fleet_cmd->add_option("--values", o.values_file, "True values, one integer per line and device")
      ->check(CLI::ExistingFile);
  fleet_cmd->add_option("--threads", o.threads, "Concurrent connections")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  fleet_cmd
      ->add_option("--retries", o.retries,
                   "Resends of a batch after a network failure or 5xx (exponential backoff from "
                   "50 ms, at most 2 s apart)")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  fleet_cmd->add_option("--budget", o.budget_nats, "Each device's lifetime epsilon budget (nats)")
      ->capture_default_str();
  fleet_cmd->add_flag("--table", o.table, "Print the estimate next to the truth as a table");
  fleet_cmd
      ->add_option("--postprocess", o.postprocess,
                   "Also report Norm-Sub estimates (non-negative, summing to n): none or norm-sub")
      ->check(CLI::IsMember({"none", "norm-sub"}))
      ->capture_default_str();

  auto* discover_cmd = app.add_subcommand(
      "discover",
      "Word discovery: each line of --values is a device (a blur::Client) recording that word "
      "with pem or sfp; the collector's decoder finds the top-k words; prints JSON");
  discover_cmd->add_option("--mechanism", o.mechanism, "pem (the default) or sfp");
  discover_cmd->add_option("--epsilon", o.epsilon, "Epsilon per report, in nats")
      ->capture_default_str();
  discover_cmd->add_option("--values", o.values_file, "Words, one per line and device")
      ->required()
      ->check(CLI::ExistingFile);
  discover_cmd->add_option("--top-k", o.top_k, "How many words to report")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  discover_cmd
      ->add_option("--max-length", o.max_length,
                   "The metric's longest word, 2..16 (default: the longest in --values)")
      ->check(CLI::Range(2u, 16u));
  discover_cmd->add_option("--beam", o.beam,
                           "Prefixes kept per level (default: max(8 top-k, 64))");
  discover_cmd->add_option("--budget", o.budget_nats, "Each device's lifetime epsilon budget (nats)")
      ->capture_default_str();
  discover_cmd->add_flag("--offline", o.offline,
                         "Decode, validate, count and discover in process (else: send to "
                         "--collector)");
  collector(discover_cmd);
  discover_cmd->add_option("--threads", o.threads, "Concurrent connections")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  seeds.push_back(discover_cmd->add_option(
      "--seed", o.seed, "Seed of the simulated devices' entropy (default: fresh, printed)"));

  blur::sim::SuggestOptions suggest_options;
  auto* suggest_cmd = app.add_subcommand(
      "suggest",
      "A simulated keyboard: the SDK's int8 next-word model (export-model's file and its "
      ".vocab) suggests the next words of each prompt; prints JSON");
  suggest_cmd->add_option("--model", suggest_options.model, "Device model file (.blnw)")
      ->required()
      ->check(CLI::ExistingFile);
  suggest_cmd->add_option("--vocabulary", suggest_options.vocabulary,
                          "Its vocabulary (default: MODEL.vocab, as export-model writes it)");
  suggest_cmd->add_option("--prompt", suggest_options.prompts, "Typed text (repeatable)")
      ->required();
  suggest_cmd->add_option("--count", suggest_options.count, "Suggestions per prompt")
      ->check(CLI::Range(1u, 16u))
      ->capture_default_str();

  auto* load_cmd = app.add_subcommand(
      "load",
      "Load generator: POST pre-built batches (real SDK devices) with a fresh device "
      "nonce each, over keep-alive connections from one thread");
  common(load_cmd);
  collector(load_cmd);
  load_cmd->add_option("--duration", o.duration, "Seconds of sending")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
  load_cmd
      ->add_option("--batch", o.batch,
                   "Reports per request, spread evenly over --metrics metrics (16 x 4: the "
                   "default contribution bound's 4 per metric and device)")
      ->check(CLI::Range(1u, 64u))
      ->capture_default_str();
  load_cmd
      ->add_option("--metrics", o.load_metrics,
                   "Metrics per request, ids --metric, --metric + 1, ... (start the collector "
                   "with each), at most --batch; --metrics 1 puts the whole batch on --metric "
                   "(the contribution bound's own tests)")
      ->check(CLI::Range(1u, 64u))
      ->capture_default_str();
  load_cmd
      ->add_option("--retries", o.retries,
                   "Resends of an enrollment after a network failure, 5xx or 429 (after its "
                   "Retry-After, at most 5 s); then the load stops with the collector's answer")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  load_cmd->add_option("--start-file", o.start_file,
                       "After enrolling, wait until this file exists before sending (several "
                       "generators started at once: touch it when all have enrolled)");
  load_cmd
      ->add_option("--rate", o.rate,
                   "Requests per second over all connections (0: as fast as answers come); a "
                   "low rate beside a load is a probe of an honest device's latency")
      ->check(CLI::Range(0.0, 1e7))
      ->capture_default_str();
  load_cmd->add_option("--connections", o.connections, "Keep-alive connections")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  load_cmd->add_flag("--json", o.json, "Print the result as JSON");
  load_cmd
      ->add_option("--devices", o.load_devices,
                   "With an enrollment secret: device nonces enrolled before the clock starts, "
                   "one per request; sending ends when they are used up")
      ->check(CLI::Range(uint64_t{1}, uint64_t{10000000}))
      ->capture_default_str();
  load_cmd->add_option("--save-batch", o.save_batch,
                       "Write one pool batch (encoded blur.ReportBatch) to this file, print its "
                       "device-nonce offset and exit (a template for wrk)");
  std::string metric_spec, history_values, history_out = "-";
  auto* history_cmd = app.add_subcommand(
      "history",
      "Raw reports for your own privacy attack: --devices fresh SDK devices (real blur::Client, "
      "real ledger on simulated flash, fresh secrets) each record --values in order; writes one "
      "JSON line per device: the spent epsilon after each value, record()'s status per value, "
      "and every report as it went on the wire (mechanism, epsilon_micros, "
      "longitudinal_epsilon_micros, domain_size, and bit | index | bits (hex) | value | "
      "local_hash {a, b, bucket} | bloom {cohort, bits (hex)})");
  history_cmd
      ->add_option("--metric-spec", metric_spec,
                   "The metric, as the collector's --metric: "
                   "ID:MECHANISM:EPSILON[:DOMAIN][:longitudinal=E][:max_reports_per_bucket=N]; "
                   "EPSILON is what each report charges, longitudinal=E memoizes (loloha needs "
                   "it; sue, rappor and onebit may have it). E.g. 1:loloha:0.5:16:longitudinal=2")
      ->required();
  history_cmd
      ->add_option("--values", history_values,
                   "The history, comma-separated, at most 64: indices below the domain, or words "
                   "for pem and sfp (sent as the device sends any text)")
      ->required();
  history_cmd->add_option("--devices", o.devices, "Number of devices")
      ->check(CLI::Range(uint64_t{1}, uint64_t{100000000}))
      ->capture_default_str();
  history_cmd->add_option("--budget", o.budget_nats, "Each device's lifetime budget (nats)")
      ->capture_default_str();
  history_cmd->add_option("--out", history_out, "Output file (- : standard output)")
      ->capture_default_str();
  seeds.push_back(history_cmd->add_option(
      "--seed", o.seed, "Seed of the devices' entropy (default: fresh, printed)"));

  bool audit_long = false;
  double audit_alpha = 0.05;
  std::string audit_only, audit_markdown;
  auto* audit_cmd = app.add_subcommand(
      "audit",
      "Attack real SDK devices: for each case, --devices devices per history of one device's "
      "values, a fixed test, and the one-sided Clopper-Pearson lower bound on epsilon next to "
      "what the ledger charged; exits 1 if a bound passes its charge, a charge depends on the "
      "values, or a power check fails (docs/privacy-audit.md)");
  audit_cmd->add_option("--devices", o.devices, "Devices per history and case")
      ->check(CLI::Range(uint64_t{2}, uint64_t{100000000}))
      ->capture_default_str();
  audit_cmd->add_flag("--long", audit_long,
                      "Every one-shot mechanism at epsilon 0.5, 1 and 4 (else 1 only)");
  audit_cmd->add_option("--alpha", audit_alpha, "Confidence of each one-sided bound: 1 - alpha")
      ->check(CLI::Range(1e-12, 0.5))
      ->capture_default_str();
  audit_cmd->add_option("--case", audit_only, "Only the cases whose name contains this text");
  audit_cmd->add_option("--markdown", audit_markdown, "Also write the table as markdown here");
  seeds.push_back(audit_cmd->add_option("--seed", o.seed,
                                        "Seed of the devices' entropy (default: fresh, printed)"));

  CLI11_PARSE(app, argc, argv);
  for (const CLI::Option* seed : seeds) o.seed_given = o.seed_given || seed->count() > 0;
  if (randomize_cmd->parsed()) return randomize(o);
  if (suggest_cmd->parsed()) return blur::sim::suggest(suggest_options);
  if (std::string error; !blur::sim::load_secrets(&o, &error)) return fail(error);
  if (load_cmd->parsed()) return blur::sim::load(o);
  std::string error;
  if (!blur::sim::resolve_seed(&o, &error)) return fail(error);
  if (history_cmd->parsed()) return blur::sim::history(o, metric_spec, history_values, history_out);
  if (audit_cmd->parsed()) {
    return blur::sim::audit(o, audit_long, audit_alpha, audit_only, audit_markdown);
  }
  if (discover_cmd->parsed()) {
    if (discover_cmd->count("--mechanism") == 0) o.mechanism = "pem";
    return blur::sim::discover(o);
  }
  return blur::sim::fleet(o);
}
