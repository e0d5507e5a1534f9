#include "audit.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <thread>

#include "aggregate/aggregate.h"
#include "blur/discovery/fragment_puzzle.h"
#include "blur/discovery/prefix_extension.h"
#include "blur/discovery/prefix_hash.h"
#include "blur/discovery/word.h"
#include "clopper_pearson.h"
#include "simulated_device.h"

namespace blur::sim {

namespace {

using collector::IncomingReport;
using collector::MetricConfig;
using Score = std::function<double(const MetricConfig&, const DeviceHistory&)>;

constexpr uint64_t kBudgetMicros = 1000000000;  // 1,000 nats: no case runs out

// ---- statistics -------------------------------------------------------------

// The likelihood-ratio set of a one-report history: the report supports v1
// and not v0, by the collector's own support rule (frequency oracles).
Score supports_only(uint32_t v1, uint32_t v0) {
  return [=](const MetricConfig& metric, const DeviceHistory& h) {
    if (h.reports.empty()) return 0.0;
    collector::Aggregate aggregate(metric);
    aggregate.add(h.reports.front());
    const std::vector<uint64_t> support = aggregate.support_counts();
    return support[v1] > support[v0] ? 1.0 : 0.0;
  };
}

// Numeric one-report tests: a 1 bit (onebit), a value at or past `at` (laplace).
Score bit_set() {
  return [](const MetricConfig&, const DeviceHistory& h) {
    return !h.reports.empty() && h.reports.front().value == 1 ? 1.0 : 0.0;
  };
}
Score number_at_least(int64_t at) {
  return [=](const MetricConfig&, const DeviceHistory& h) {
    return !h.reports.empty() && h.reports.front().number >= at ? 1.0 : 0.0;
  };
}

// pem: the report's prefix hash matches w1's prefix at its level and not w0's.
Score prefix_supports_only(const std::string& w1, const std::string& w0) {
  return [=](const MetricConfig& metric, const DeviceHistory& h) {
    if (h.reports.empty()) return 0.0;
    const IncomingReport& r = h.reports.front();
    const uint32_t bits = PrefixExtension::bucket_bits(metric.epsilon_micros);
    const uint32_t length = PrefixExtension::prefix_length(r.hash_a);
    const PrefixHashKey key = prefix_hash_key(r.hash_a, r.hash_b);
    const Word a = Word::parse(w1.data(), w1.size()).value().prefix(length);
    const Word b = Word::parse(w0.data(), w0.size()).value().prefix(length);
    return prefix_hash(key, a, bits) == r.value && prefix_hash(key, b, bits) != r.value ? 1.0
                                                                                        : 0.0;
  };
}

// sfp: both sketches favour w1 over w0 (each half a likelihood-ratio set
// at eps/2, so the pair's ratio is e^eps): the word bucket is w1's and not
// w0's, and the fragment bucket is w1's (piece, fragment) and not w0's.
Score fragments_support_only(const std::string& w1, const std::string& w0) {
  return [=](const MetricConfig& metric, const DeviceHistory& h) {
    if (h.reports.empty()) return 0.0;
    const IncomingReport& r = h.reports.front();
    const uint32_t bits = SequenceFragmentPuzzle::bucket_bits(metric.epsilon_micros);
    const uint32_t position = r.hash_a >> kFragmentHashSeedBits;
    const uint32_t fragment_seed = r.hash_a & (kFragmentHashSeeds - 1);
    const uint32_t word_bucket = r.value & 0xFF, fragment_bucket = r.value >> 8;
    const PrefixHashKey word_key =
        prefix_hash_key(SequenceFragmentPuzzle::kWordKeyLevel, r.hash_b);
    auto supports = [&](const std::string& text) {
      const Word w = Word::parse(text.data(), text.size()).value();
      const uint64_t value =
          fragment_value(puzzle_piece(w), w.code(kFragmentCharacters * position),
                         w.code(kFragmentCharacters * position + 1));
      return std::pair{prefix_hash(word_key, w, bits) == word_bucket,
                       fragment_hash(position, fragment_seed, value, bits) == fragment_bucket};
    };
    const auto [word1, fragment1] = supports(w1);
    const auto [word0, fragment0] = supports(w0);
    return word1 && !word0 && fragment1 && !fragment0 ? 1.0 : 0.0;
  };
}

// Longitudinal tests on the first two reports.
Score payload_differs() {  // the bit, index or bucket
  return [](const MetricConfig&, const DeviceHistory& h) {
    return h.reports.size() >= 2 && h.reports[0].value != h.reports[1].value ? 1.0 : 0.0;
  };
}
Score cohort_differs() {  // RAPPOR's cohort (in `value` for Bloom payloads)
  return payload_differs();
}
// Fewer bits in common between the two bit vectors: more likely a change.
Score bits_disagree() {
  return [](const MetricConfig& metric, const DeviceHistory& h) {
    if (h.reports.size() < 2) return 0.0;
    const std::string& a = h.reports[0].bits;
    const std::string& b = h.reports[1].bits;
    const uint32_t bits = metric.mechanism == MechanismId::kRappor ? metric.rappor.bloom_bits
                                                                   : metric.domain_size;
    double differ = 0;
    for (uint32_t i = 0; i < bits && i / 8 < a.size() && i / 8 < b.size(); ++i) {
      differ += ((a[i / 8] ^ b[i / 8]) >> (i % 8)) & 1;
    }
    return differ;
  };
}
// A value went unreported: fewer reports than values.
Score report_missing() {
  return [](const MetricConfig&, const DeviceHistory& h) {
    return h.reports.size() < h.statuses.size() ? 1.0 : 0.0;
  };
}

std::vector<std::string> repeat(const std::string& value, size_t times) {
  return std::vector<std::string>(times, value);
}
std::vector<std::string> counting(size_t count) {
  std::vector<std::string> values;
  for (size_t i = 0; i < count; ++i) values.push_back(std::to_string(i));
  return values;
}

std::string decimal(double epsilon) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", epsilon);
  return text;
}

}  // namespace

std::vector<AuditCase> audit_cases(bool long_form) {
  std::vector<AuditCase> cases;
  const std::vector<double> epsilons =
      long_form ? std::vector<double>{0.5, 1, 4} : std::vector<double>{1};
  // One-shot mechanisms: the worst pair of values and the likelihood-ratio test.
  for (const double e : epsilons) {
    const std::string eps = decimal(e);
    auto one = [&](const std::string& name, const std::string& spec, const std::string& v0,
                   const std::string& v1, const std::string& statistic, Score score) {
      cases.push_back(
          AuditCase{name + " eps " + eps, spec, {v0}, {v1}, statistic, std::move(score), 0});
    };
    const std::string lr = "supports v1, not v0";
    one("rr", "1:rr:" + eps, "0", "1", "bit = 1", bit_set());
    one("grr d=16", "1:grr:" + eps + ":16", "0", "1", lr, supports_only(1, 0));
    one("sue d=16", "1:sue:" + eps + ":16", "0", "1", lr, supports_only(1, 0));
    one("oue d=16", "1:oue:" + eps + ":16", "0", "1", lr, supports_only(1, 0));
    one("hr d=16", "1:hr:" + eps + ":16", "0", "1", lr, supports_only(1, 0));
    one("olh d=16", "1:olh:" + eps + ":16", "0", "1", lr, supports_only(1, 0));
    one("blh d=16", "1:blh:" + eps + ":16", "0", "1", lr, supports_only(1, 0));
    one("rappor d=16", "1:rappor:" + eps + ":16", "0", "1", lr, supports_only(1, 0));
    one("laplace d=16", "1:laplace:" + eps + ":16", "0", "15", "value >= 15",
        number_at_least(15));
    one("onebit d=16", "1:onebit:" + eps + ":16", "0", "15", "bit = 1", bit_set());
    one("pem len 8", "1:pem:" + eps + ":8", "words", "worde", "prefix hash: w1's, not w0's",
        prefix_supports_only("worde", "words"));
    one("sfp len 8", "1:sfp:" + eps + ":8", "words", "worde",
        "word and fragment buckets: w1's, not w0's", fragments_support_only("worde", "words"));
    one("loloha d=16 (eps_inf 2)", "1:loloha:" + eps + ":16:longitudinal=2", "0", "1", lr,
        supports_only(1, 0));
  }
  // Longitudinal: did the value change between two reports? Charged: 2 eta.
  cases.push_back(AuditCase{"loloha d=16 eta 0.5 eps_inf 2: change", "1:loloha:0.5:16:longitudinal=2",
                            {"3", "3"}, {"3", "5"}, "buckets differ", payload_differs(), 0});
  cases.push_back(AuditCase{"loloha d=16 eta 8 eps_inf 8: change (power)",
                            "1:loloha:8:16:longitudinal=8", {"3", "3"}, {"3", "5"},
                            "buckets differ", payload_differs(), 1.0});
  cases.push_back(AuditCase{"memoized rappor d=16 eta 1 eps_inf 2: cohort",
                            "1:rappor:1:16:longitudinal=2", {"3", "3"}, {"3", "5"},
                            "cohorts differ", cohort_differs(), 0});
  cases.push_back(AuditCase{"memoized rappor d=16 eta 1 eps_inf 2: bits",
                            "1:rappor:1:16:longitudinal=2", {"3", "3"}, {"3", "5"},
                            "bits that differ >= t", bits_disagree(), 0});
  cases.push_back(AuditCase{"memoized sue d=64 eta 2 eps_inf 4: bits", "1:sue:2:64:longitudinal=4",
                            {"3", "3"}, {"3", "5"}, "bits that differ >= t", bits_disagree(), 0});
  cases.push_back(AuditCase{"memoized sue d=4 eta 20 eps_inf 4: bits (power)",
                            "1:sue:20:4:longitudinal=4", {"1", "1"}, {"1", "2"},
                            "bits that differ >= t", bits_disagree(), 1.0});
  cases.push_back(AuditCase{"memoized onebit d=16 eta 1 eps_inf 1: bits differ",
                            "1:onebit:1:16:longitudinal=1", {"0", "0"}, {"0", "15"},
                            "bits differ", payload_differs(), 0});
  cases.push_back(AuditCase{"memoized onebit d=16 eta 8 eps_inf 4: bits differ (power)",
                            "1:onebit:8:16:longitudinal=4", {"0", "0"}, {"0", "15"},
                            "bits differ", payload_differs(), 1.0});
  // Refusals that depended on the value: 17 distinct values filled the old
  // 16-slot memo table; a word with another character was refused.
  cases.push_back(AuditCase{"memoized sue d=32: 17 distinct values", "1:sue:1:32:longitudinal=2",
                            repeat("0", 17), counting(17), "a report is missing",
                            report_missing(), 0});
  cases.push_back(AuditCase{"pem len 8: a word with another character", "1:pem:1:8", {"words"},
                            {"word5"}, "no report", report_missing(), 0});
  cases.push_back(AuditCase{"pem len 8: a word longer than the domain", "1:pem:1:8", {"words"},
                            {"wordsmiths"}, "no report", report_missing(), 0});
  return cases;
}

AuditResult run_audit_case(const AuditCase& c, uint64_t devices, uint64_t seed, double alpha) {
  const auto metric = collector::parse_metric_spec(c.metric_spec);
  AuditResult result{c.name, c.statistic, devices, 0, 0, devices, 1, 0, 0, 0, true,
                     c.min_epsilon_lower};
  if (!metric) {
    result.charges_equal = false;
    result.epsilon_lower = std::numeric_limits<double>::infinity();
    result.statistic = "invalid case: " + metric.error().message;
    return result;
  }
  // Scores of every device, per history; the two histories' devices are
  // distinct (seeds 2i and 2i + 1).
  std::vector<double> scores[2];
  uint64_t low_charge[2] = {UINT64_MAX, UINT64_MAX};
  Status failed[2] = {Status::kOk, Status::kOk};
  // One thread per history; each device's outcome depends on its seed only.
  auto live = [&](int which) {
    const std::vector<std::string>& values = which == 0 ? c.h0 : c.h1;
    uint64_t& charged = which == 0 ? result.charged_h0 : result.charged_h1;
    DeviceHistory history;
    for (uint64_t i = 0; i < devices && failed[which] == Status::kOk; ++i) {
      failed[which] = run_history(*metric, values, device_seed(seed, 2 * i + which), kBudgetMicros,
                                  &history);
      const uint64_t spent = history.spent_micros.empty() ? 0 : history.spent_micros.back();
      charged = std::max(charged, spent);
      low_charge[which] = std::min(low_charge[which], spent);
      scores[which].push_back(c.score(*metric, history));
    }
  };
  std::thread other(live, 1);
  live(0);
  other.join();
  for (const Status status : failed) {
    if (status != Status::kOk) {
      result.charges_equal = false;
      result.statistic = std::string("device failed: ") + status_name(status);
      return result;
    }
  }
  result.charges_equal = low_charge[0] == result.charged_h0 && low_charge[1] == result.charged_h1 &&
                         result.charged_h0 == result.charged_h1;
  // Binary scores count every device; others pick the threshold on the
  // first half and count the second.
  bool binary = true;
  for (const auto& side : scores) {
    for (const double s : side) binary = binary && (s == 0 || s == 1);
  }
  uint64_t begin = 0;
  if (!binary) {
    begin = devices / 2;
    std::map<double, int> candidates;
    for (const auto& side : scores) {
      for (uint64_t i = 0; i < begin; ++i) candidates[side[i]] = 0;
    }
    double best = -std::numeric_limits<double>::infinity();
    for (const auto& [threshold, unused] : candidates) {
      uint64_t k[2] = {0, 0};
      for (int which = 0; which < 2; ++which) {
        for (uint64_t i = 0; i < begin; ++i) k[which] += scores[which][i] >= threshold;
      }
      const double e = epsilon_lower_bound(k[1], begin, k[0], begin, alpha).epsilon_lower;
      if (e > best) {
        best = e;
        result.threshold = threshold;
      }
    }
  }
  result.counted = devices - begin;
  for (uint64_t i = begin; i < devices; ++i) {
    result.flagged_h0 += scores[0][i] >= result.threshold;
    result.flagged_h1 += scores[1][i] >= result.threshold;
  }
  result.epsilon_lower = epsilon_lower_bound(result.flagged_h1, result.counted, result.flagged_h0,
                                             result.counted, alpha)
                             .epsilon_lower;
  return result;
}

bool audit_holds(const AuditResult& r) {
  const double charged = std::min(r.charged_h0, r.charged_h1) / 1e6;
  return r.charges_equal && r.epsilon_lower <= charged &&
         (r.min_epsilon_lower == 0 || r.epsilon_lower >= r.min_epsilon_lower);
}

int audit(const Options& o, bool long_form, double alpha, const std::string& only,
          const std::string& markdown_path) {
  std::ofstream markdown;
  if (!markdown_path.empty()) {
    markdown.open(markdown_path);
    if (!markdown) return fail("cannot write " + markdown_path);
    markdown << "| case | statistic | devices counted per history | flagged h0 | flagged h1 | "
                "eps_lower | charged | tightness |\n|---|---|---|---|---|---|---|---|\n";
  }
  bool all_hold = true;
  std::printf("%-52s %9s %9s %9s %9s %9s %6s\n", "case", "counted", "flag h0", "flag h1",
              "eps_low", "charged", "holds");
  for (const AuditCase& c : audit_cases(long_form)) {
    if (!only.empty() && c.name.find(only) == std::string::npos) continue;
    const AuditResult r = run_audit_case(c, o.devices, o.seed, alpha);
    const bool holds = audit_holds(r);
    all_hold = all_hold && holds;
    const double charged = std::min(r.charged_h0, r.charged_h1) / 1e6;
    std::printf("%-52s %9llu %9llu %9llu %9.3f %9.3f %6s%s\n", c.name.c_str(),
                static_cast<unsigned long long>(r.counted),
                static_cast<unsigned long long>(r.flagged_h0),
                static_cast<unsigned long long>(r.flagged_h1), r.epsilon_lower, charged,
                holds ? "yes" : "NO", r.charges_equal ? "" : "  (charges differ)");
    if (!r.charges_equal && r.statistic.rfind("device", 0) == 0) {
      std::printf("    %s\n", r.statistic.c_str());
    }
    if (markdown) {
      char row[512];
      const double tightness = r.epsilon_lower > 0 && charged > 0 ? r.epsilon_lower / charged : 0;
      std::snprintf(row, sizeof row, "| %s | %s | %llu | %llu | %llu | %.3f | %.3f | %.2f |\n",
                    c.name.c_str(), c.statistic.c_str(),
                    static_cast<unsigned long long>(r.counted),
                    static_cast<unsigned long long>(r.flagged_h0),
                    static_cast<unsigned long long>(r.flagged_h1), r.epsilon_lower, charged,
                    tightness);
      markdown << row;
    }
  }
  std::fflush(stdout);
  std::printf("%s (one-sided Clopper-Pearson at %g per side: a correct mechanism fails a row "
              "with probability at most %g)\n",
              all_hold ? "every case holds" : "SOME CASES DO NOT HOLD", alpha, 2 * alpha);
  return all_hold ? 0 : 1;
}

}  // namespace blur::sim
