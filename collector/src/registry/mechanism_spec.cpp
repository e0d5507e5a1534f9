#include "registry/mechanism_spec.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "blur/discovery/fragment_puzzle.h"
#include "blur/discovery/prefix_extension.h"
#include "blur/mechanisms/bloom_hash.h"
#include "blur/mechanisms/hadamard_response.h"
#include "blur/mechanisms/local_hashing.h"
#include "discovery/fragment_puzzle_discovery.h"

namespace blur::collector {

namespace {

// ---- randomized response: a report supports exactly its value -------------

size_t per_value_size(const MetricConfig& metric) { return metric.domain_size; }

void tally_value(const MetricConfig&, const IncomingReport& report, uint64_t multiplicity,
                 uint64_t* tally) {
  tally[report.value] += multiplicity;
}

void support_is_tally(const MetricConfig& metric, const uint64_t* tally, uint64_t,
                      uint64_t* support) {
  std::copy(tally, tally + metric.domain_size, support);
}

OracleParams randomized_response(const MetricConfig& metric) {
  return randomized_response_params(metric.epsilon_micros, metric.domain_size);
}

// ---- unary encodings: a report supports every value whose bit is set -------

void tally_bits(const MetricConfig& metric, const IncomingReport& report, uint64_t multiplicity,
                uint64_t* tally) {
  const size_t bytes = std::min<size_t>(report.bits.size(), (metric.domain_size + 7) / 8);
  for (size_t byte = 0; byte < bytes; ++byte) {
    for (unsigned set = static_cast<uint8_t>(report.bits[byte]); set != 0; set &= set - 1) {
      const size_t bit = 8 * byte + static_cast<size_t>(__builtin_ctz(set));
      if (bit < metric.domain_size) tally[bit] += multiplicity;
    }
  }
}

OracleParams symmetric_unary(const MetricConfig& metric) {
  return symmetric_unary_params(metric.epsilon_micros, metric.longitudinal_epsilon_micros,
                                metric.domain_size);
}
OracleParams optimized_unary(const MetricConfig& metric) {
  return optimized_unary_params(metric.epsilon_micros);
}

// ---- Hadamard response ------------------------------------------------------

size_t hadamard_tally_size(const MetricConfig& metric) {
  return blur::hadamard_size(metric.domain_size);
}

// Fast Walsh-Hadamard transform in place, w.size() a power of two:
// w[u] <- sum_j w[j] (-1)^popcount(u & j).
void walsh_hadamard(std::vector<int64_t>& w) {
  for (size_t half = 1; half < w.size(); half <<= 1) {
    for (size_t block = 0; block < w.size(); block += 2 * half) {
      for (size_t i = block; i < block + half; ++i) {
        const int64_t a = w[i], b = w[i + half];
        w[i] = a + b;
        w[i + half] = a - b;
      }
    }
  }
}

// Report j supports v iff row v + 1 is +1 at j, so I_v = (n + w[v + 1]) / 2.
void hadamard_support(const MetricConfig& metric, const uint64_t* tally, uint64_t reports,
                      uint64_t* support) {
  std::vector<int64_t> w(tally, tally + hadamard_tally_size(metric));
  walsh_hadamard(w);
  for (uint32_t v = 0; v < metric.domain_size; ++v) {
    support[v] = static_cast<uint64_t>((static_cast<int64_t>(reports) + w[v + 1]) / 2);
  }
}

// Own value: randomized response into its half; others: exactly 1/2.
OracleParams hadamard(const MetricConfig& metric) {
  return OracleParams{1.0 / (1.0 + std::exp(-(metric.epsilon_micros / 1e6))), 0.5};
}

// ---- local hashing ------------------------------------------------------------

size_t local_hash_tally_size(const MetricConfig& metric) {
  const auto shape = local_hash_shape(metric);
  return size_t{1} << (shape.field_bits + shape.bucket_bits);
}

void tally_local_hash(const MetricConfig& metric, const IncomingReport& report,
                      uint64_t multiplicity, uint64_t* tally) {
  const auto shape = local_hash_shape(metric);
  const uint64_t key = report.value ^ (report.hash_b >> (shape.field_bits - shape.bucket_bits));
  tally[uint64_t{report.hash_a} << shape.bucket_bits | key] += multiplicity;
}

// I_v = sum over (a, y) of T[a, y] [top(a v) = y], T the tally. With
// [x = y] = 2^-b sum_s (-1)^{s.(x xor y)} over s in {0,1}^b, and
// s.top(a v) = u_v(s).a for the GF(2)-linear u_v(s) (bit i of u_v(s) is
// s.top(e_i v)):
//
//   I_v = 2^-b sum_s W[u_v(s), s],   W = the Walsh-Hadamard transform of T
//
// (indices a << b | y). One transform of the 2^(k+b) tally, then 2^b terms
// per value: O((k + b) 2^(k+b) + d (k b + 2^b)), whatever the number of
// reports, instead of O(d) per distinct a. Exact: integer sums.
void local_hash_support(const MetricConfig& metric, const uint64_t* tally, uint64_t,
                        uint64_t* support) {
  const auto shape = local_hash_shape(metric);
  const uint32_t k = shape.field_bits, b = shape.bucket_bits, shift = k - b;
  std::vector<int64_t> w(tally, tally + (size_t{1} << (k + b)));
  walsh_hadamard(w);
  for (uint32_t v = 0; v < metric.domain_size; ++v) {
    // u_j = u_v(e_j): bit i is bit shift + j of e_i v.
    uint32_t u_basis[blur::LocalHashing::kMaxBucketBits] = {};
    for (uint32_t i = 0; i < k; ++i) {
      const uint32_t top = blur::gf2_multiply(v, 1u << i, k) >> shift;
      for (uint32_t j = 0; j < b; ++j) u_basis[j] |= ((top >> j) & 1u) << i;
    }
    int64_t sum = w[0];  // s = 0: u = 0
    uint32_t u = 0;
    for (uint32_t s = 1; s < (1u << b); ++s) {
      // Gray code: s and its predecessor differ in one bit.
      const uint32_t gray = s ^ (s >> 1);
      u ^= u_basis[__builtin_ctz(s)];
      sum += w[(size_t{u} << b) | gray];
    }
    support[v] = static_cast<uint64_t>(sum >> b);
  }
}

// Randomized response over g buckets; another value shares the bucket with
// probability 1/g exactly (pairwise-independent family).
OracleParams local_hash(const MetricConfig& metric) {
  const double g = static_cast<double>(1u << local_hash_shape(metric).bucket_bits);
  return OracleParams{randomized_response_params(metric.epsilon_micros, static_cast<uint32_t>(g)).p,
                      1.0 / g};
}

// ---- prefix extension (word discovery) ---------------------------------------

size_t prefix_tally_size(const MetricConfig& metric) {
  return size_t{blur::PrefixExtension::levels(metric.domain_size)} * blur::kPrefixHashSeeds
         << blur::PrefixExtension::bucket_bits(metric.epsilon_micros);
}

// Index ((level * seeds) + seed) * 2^g + bucket; the validator bounds each.
size_t prefix_cell(const MetricConfig& metric, const IncomingReport& report) {
  const uint32_t bits = blur::PrefixExtension::bucket_bits(metric.epsilon_micros);
  return ((size_t{report.hash_a} * blur::kPrefixHashSeeds + report.hash_b) << bits) | report.value;
}

void tally_prefix(const MetricConfig& metric, const IncomingReport& report, uint64_t multiplicity,
                  uint64_t* tally) {
  tally[prefix_cell(metric, report)] += multiplicity;
}

// Randomized response over 2^g buckets; another prefix shares the bucket
// with probability 2^-g over the family (prefix_hash.h).
OracleParams prefix_extension(const MetricConfig& metric) {
  const uint32_t g = 1u << blur::PrefixExtension::bucket_bits(metric.epsilon_micros);
  return OracleParams{randomized_response_params(metric.epsilon_micros, g).p,
                      1.0 / static_cast<double>(g)};
}

// ---- sequence fragment puzzle (word discovery) -------------------------------

size_t fragment_puzzle_tally_size(const MetricConfig& metric) {
  return fragment_puzzle_shape(metric).cells();
}

// The word sketch's cell and the fragment sketch's; the validator bounds
// each field (a = position << 10 | fragment seed, b = word seed, value =
// fragment bucket << 8 | word bucket).
void tally_fragment_puzzle(const MetricConfig& metric, const IncomingReport& report,
                           uint64_t multiplicity, uint64_t* tally) {
  const FragmentPuzzleShape shape = fragment_puzzle_shape(metric);
  const uint32_t position = report.hash_a >> blur::kFragmentHashSeedBits;
  const uint32_t fragment_seed = report.hash_a & (blur::kFragmentHashSeeds - 1);
  tally[(size_t{report.hash_b} << shape.bucket_bits) | (report.value & 0xFFu)] += multiplicity;
  tally[shape.fragment_offset(position) + ((size_t{fragment_seed} << shape.bucket_bits) |
                                           (report.value >> 8))] += multiplicity;
}

// ---- RAPPOR -----------------------------------------------------------------

size_t bloom_tally_size(const MetricConfig& metric) {
  return size_t{metric.rappor.cohort_count} * metric.rappor.bloom_bits;
}

void tally_bloom(const MetricConfig& metric, const IncomingReport& report, uint64_t multiplicity,
                 uint64_t* tally) {
  uint64_t* row = tally + size_t{report.value} * metric.rappor.bloom_bits;
  const size_t bytes = std::min<size_t>(report.bits.size(), metric.rappor.bloom_bits / 8);
  for (size_t byte = 0; byte < bytes; ++byte) {
    for (unsigned set = static_cast<uint8_t>(report.bits[byte]); set != 0; set &= set - 1) {
      row[8 * byte + static_cast<size_t>(__builtin_ctz(set))] += multiplicity;
    }
  }
}

void bloom_support(const MetricConfig& metric, const uint64_t* tally, uint64_t, uint64_t* support) {
  const blur::RapporShape& shape = metric.rappor;
  std::fill(support, support + metric.domain_size, 0);
  for (uint32_t cohort = 0; cohort < shape.cohort_count; ++cohort) {
    const uint64_t* bit_counts = tally + size_t{cohort} * shape.bloom_bits;
    if (std::all_of(bit_counts, bit_counts + shape.bloom_bits, [](uint64_t c) { return c == 0; })) {
      continue;  // no reports in this cohort
    }
    for (uint32_t v = 0; v < metric.domain_size; ++v) {
      char text[10];
      const size_t length = blur::decimal_text(v, text);
      uint16_t positions[blur::kMaxBloomHashes];
      if (blur::bloom_positions(blur::BloomHashKey{metric.id, metric.hash_key}, cohort,
                                reinterpret_cast<const uint8_t*>(text), length, shape.bloom_bits,
                                shape.hash_count, positions) != blur::Status::kOk) {
        continue;  // unreachable: the shape was validated and SHA-256 does not fail
      }
      for (uint32_t j = 0; j < shape.hash_count; ++j) support[v] += bit_counts[positions[j]];
    }
  }
}

// ---- the specs, one per line of the SDK's mechanism table -------------------

constexpr uint32_t kMaxRapporCandidates = 1u << 16;

constexpr MechanismSpec kBinaryRandomizedResponseSpec{MechanismId::kBinaryRandomizedResponse,
                                                      false,
                                                      2,
                                                      per_value_size,
                                                      tally_value,
                                                      support_is_tally,
                                                      randomized_response};
constexpr MechanismSpec kGeneralizedRandomizedResponseSpec{
    MechanismId::kGeneralizedRandomizedResponse,
    false,
    mechanism_max_domain(MechanismId::kGeneralizedRandomizedResponse),
    per_value_size,
    tally_value,
    support_is_tally,
    randomized_response};
constexpr MechanismSpec kSymmetricUnaryEncodingSpec{
    MechanismId::kSymmetricUnaryEncoding,
    false,
    mechanism_max_domain(MechanismId::kSymmetricUnaryEncoding),
    per_value_size,
    tally_bits,
    support_is_tally,
    symmetric_unary};
constexpr MechanismSpec kOptimizedUnaryEncodingSpec{
    MechanismId::kOptimizedUnaryEncoding,
    false,
    mechanism_max_domain(MechanismId::kOptimizedUnaryEncoding),
    per_value_size,
    tally_bits,
    support_is_tally,
    optimized_unary};
constexpr MechanismSpec kDiscreteLaplaceSpec{MechanismId::kDiscreteLaplace,
                                             true,
                                             mechanism_max_domain(MechanismId::kDiscreteLaplace),
                                             nullptr,
                                             nullptr,
                                             nullptr,
                                             nullptr};
constexpr MechanismSpec kOneBitMeanSpec{MechanismId::kOneBitMean,
                                        true,
                                        mechanism_max_domain(MechanismId::kOneBitMean),
                                        nullptr,
                                        nullptr,
                                        nullptr,
                                        nullptr};
constexpr MechanismSpec kHadamardResponseSpec{MechanismId::kHadamardResponse,
                                              false,
                                              mechanism_max_domain(MechanismId::kHadamardResponse),
                                              hadamard_tally_size,
                                              tally_value,
                                              hadamard_support,
                                              hadamard};
constexpr MechanismSpec kOptimizedLocalHashingSpec{
    MechanismId::kOptimizedLocalHashing,
    false,
    mechanism_max_domain(MechanismId::kOptimizedLocalHashing),
    local_hash_tally_size,
    tally_local_hash,
    local_hash_support,
    local_hash};
constexpr MechanismSpec kBinaryLocalHashingSpec{
    MechanismId::kBinaryLocalHashing,
    false,
    mechanism_max_domain(MechanismId::kBinaryLocalHashing),
    local_hash_tally_size,
    tally_local_hash,
    local_hash_support,
    local_hash};
// LOLOHA: local hashing's tally and support (a report supports v iff
// h_{a,b}(v) = y), with the two-stage p.
constexpr MechanismSpec kLolohaSpec{MechanismId::kLoloha,
                                    false,
                                    mechanism_max_domain(MechanismId::kLoloha),
                                    local_hash_tally_size,
                                    tally_local_hash,
                                    local_hash_support,
                                    loloha_params};
constexpr MechanismSpec kRapporSpec{
    MechanismId::kRappor,
    false,
    std::min(kMaxRapporCandidates, mechanism_max_domain(MechanismId::kRappor)),
    bloom_tally_size,
    tally_bloom,
    bloom_support,
    rappor_params};
constexpr MechanismSpec kPrefixExtensionSpec{MechanismId::kPrefixExtension,
                                             false,
                                             mechanism_max_domain(MechanismId::kPrefixExtension),
                                             prefix_tally_size,
                                             tally_prefix,
                                             nullptr,
                                             prefix_extension,
                                             true,
                                             prefix_cell};
constexpr MechanismSpec kSequenceFragmentPuzzleSpec{
    MechanismId::kSequenceFragmentPuzzle,
    false,
    mechanism_max_domain(MechanismId::kSequenceFragmentPuzzle),
    fragment_puzzle_tally_size,
    tally_fragment_puzzle,
    nullptr,
    fragment_puzzle_params,
    true};

}  // namespace

// A mechanism in the table without a spec here does not compile.
const MechanismSpec& mechanism_spec(MechanismId id) {
  switch (id) {
#define BLUR_X(number, Cpp, name, C, PROTO, Payload, max_domain) \
  case MechanismId::k##Cpp:                                      \
    static_assert(k##Cpp##Spec.id == MechanismId::k##Cpp);       \
    return k##Cpp##Spec;
    BLUR_MECHANISM_TABLE(BLUR_X)
#undef BLUR_X
  }
  return kBinaryRandomizedResponseSpec;  // unreachable: ids are validated
}

OracleParams oracle_params(const MetricConfig& metric) {
  const MechanismSpec& spec = mechanism_spec(metric.mechanism);
  return spec.params ? spec.params(metric) : OracleParams{0.5, 0.5};
}

}  // namespace blur::collector
