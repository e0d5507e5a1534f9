// Random valid reports of any metric (each payload field within the
// metric's shape), for aggregate and store tests.
#ifndef BLUR_TESTS_SUPPORT_RANDOM_REPORTS_H
#define BLUR_TESTS_SUPPORT_RANDOM_REPORTS_H

#include <random>
#include <type_traits>
#include <vector>

#include "blur/discovery/fragment_puzzle.h"
#include "blur/discovery/prefix_extension.h"
#include "blur/mechanisms/any_mechanism.h"  // each mechanism's builder
#include "config/metric_rules.h"
#include "mechanisms/local_hashing.h"
#include "mechanisms/mechanism_spec.h"
#include "model/incoming_report.h"

namespace blur_test {

// A report of `metric` as the decoder delivers it, its payload fields zero.
inline blur::collector::IncomingReport report_of(const blur::collector::MetricConfig& metric) {
  blur::collector::IncomingReport r;
  r.metric_id = metric.id;
  r.mechanism = static_cast<uint32_t>(metric.mechanism);
  r.epsilon_micros = metric.epsilon_micros;
  r.domain_size = metric.domain_size;
  r.longitudinal_epsilon_micros = metric.longitudinal_epsilon_micros;
  r.has_payload = true;
  r.payload = blur::mechanism_payload(metric.mechanism);
  return r;
}

inline blur::collector::IncomingReport random_report(const blur::collector::MetricConfig& metric,
                                                     std::mt19937_64& rng) {
  using blur::PayloadKind;
  blur::collector::IncomingReport r = report_of(metric);
  auto random_bytes = [&](size_t n, unsigned valid_bits) {
    std::string bytes(n, '\0');
    for (auto& b : bytes) b = static_cast<char>(rng() & 0xFF);
    const unsigned padding = static_cast<unsigned>(8 * n - valid_bits);
    if (padding > 0) bytes.back() = static_cast<char>(static_cast<uint8_t>(bytes.back()) & (0xFFu >> padding));
    return bytes;
  };
  switch (r.payload) {
    case PayloadKind::kBit:
      r.value = static_cast<uint32_t>(rng() & 1);
      break;
    case PayloadKind::kIndex:
      r.value = static_cast<uint32_t>(rng() % blur::collector::report_value_limit(metric));
      break;
    case PayloadKind::kNumber:
      r.number = static_cast<int64_t>(rng() % 2001) - 1000;
      break;
    case PayloadKind::kLocalHash: {
      if (metric.mechanism == blur::MechanismId::kPrefixExtension) {  // level, seed, bucket
        r.hash_a = static_cast<uint32_t>(rng() % blur::PrefixExtension::levels(metric.domain_size));
        r.hash_b = static_cast<uint32_t>(rng() % blur::kPrefixHashSeeds);
        r.value = static_cast<uint32_t>(
            rng() % (1u << blur::PrefixExtension::bucket_bits(metric.epsilon_micros)));
        break;
      }
      if (metric.mechanism == blur::MechanismId::kSequenceFragmentPuzzle) {
        using blur::SequenceFragmentPuzzle;
        const uint32_t buckets = 1u << SequenceFragmentPuzzle::bucket_bits(metric.epsilon_micros);
        blur::FragmentPuzzleFields fields{};
        fields.position =
            static_cast<uint32_t>(rng() % SequenceFragmentPuzzle::positions(metric.domain_size));
        fields.fragment_seed = static_cast<uint32_t>(rng() % blur::kFragmentHashSeeds);
        fields.word_seed = static_cast<uint32_t>(rng() % blur::kPrefixHashSeeds);
        fields.fragment_bucket = static_cast<uint32_t>(rng() % buckets);
        fields.word_bucket = static_cast<uint32_t>(rng() % buckets);
        r.hash_a = fields.local_hash_a();
        r.hash_b = fields.local_hash_b();
        r.value = fields.local_hash_bucket();
        break;
      }
      const auto shape = blur::collector::local_hash_shape(metric);
      r.hash_a = static_cast<uint32_t>(rng() % (1u << shape.field_bits));
      r.hash_b = static_cast<uint32_t>(rng() % (1u << shape.field_bits));
      r.value = static_cast<uint32_t>(rng() % (1u << shape.bucket_bits));
      break;
    }
    case PayloadKind::kBits:
      r.bits = random_bytes((metric.domain_size + 7) / 8, metric.domain_size);
      break;
    case PayloadKind::kBloom:
      r.value = static_cast<uint32_t>(rng() % metric.rappor.cohort_count);
      r.bits = random_bytes(metric.rappor.bloom_bits / 8, metric.rappor.bloom_bits);
      break;
  }
  return r;
}

// One metric of every mechanism in the table (ids 1..), small domains; a
// mechanism with no one-shot form (loloha) gets a longitudinal epsilon.
// random_reports_test checks that every one of them gets valid reports.
inline std::vector<blur::collector::MetricConfig> one_metric_per_mechanism() {
  std::vector<blur::collector::MetricConfig> metrics;
  uint32_t id = 1;
#define BLUR_X(number, Cpp, name, C, PROTO, Payload, max_domain)                           \
  {                                                                                        \
    blur::collector::MetricConfig m;                                                       \
    m.id = id++;                                                                           \
    m.mechanism = blur::MechanismId::k##Cpp;                                               \
    m.epsilon_micros = 1500000;                                                            \
    const uint32_t fixed = blur::collector::mechanism_spec(m.mechanism).fixed_domain;      \
    m.domain_size = fixed != 0 ? fixed                                                     \
                    : blur::mechanism_max_domain(m.mechanism) == blur::kMaxWordLength ? 10 \
                                                                                : 37;      \
    if (std::is_void_v<blur::OneShotMechanism<blur::MechanismId::k##Cpp>>)                 \
      m.longitudinal_epsilon_micros = 2500000;                                             \
    metrics.push_back(m);                                                                  \
  }
  BLUR_MECHANISM_TABLE(BLUR_X)
#undef BLUR_X
  return metrics;
}

}  // namespace blur_test

#endif  // BLUR_TESTS_SUPPORT_RANDOM_REPORTS_H
