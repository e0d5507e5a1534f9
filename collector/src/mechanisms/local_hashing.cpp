// Local hashing (olh, blh, loloha): (a, b, y) supports v iff
// top(a v + b) = y, i.e. top(a v) = y xor top(b); tally = count per
// (a, that key).
#include "mechanisms/local_hashing.h"

#include <vector>

#include "mechanisms/mechanism_spec.h"
#include "mechanisms/walsh_hadamard.h"

namespace blur::collector {

OracleParams loloha_params(const MetricConfig& metric) {
  const uint32_t g = 1u << local_hash_shape(metric).bucket_bits;
  const double p1 = randomized_response_params(metric.longitudinal_epsilon_micros, g).p;
  const OracleParams report = randomized_response_params(metric.epsilon_micros, g);
  return OracleParams{p1 * report.p + (1.0 - p1) * report.q, 1.0 / g};
}

blur::LocalHashShape local_hash_shape(const MetricConfig& metric) {
  return blur::LocalHashing::shape(metric.mechanism == MechanismId::kBinaryLocalHashing
                                       ? blur::LocalHashing::Kind::kBinary
                                       : blur::LocalHashing::Kind::kOptimized,
                                   metric.epsilon_micros, metric.domain_size);
}

namespace {

std::string local_hash_error(const MetricConfig& metric, const IncomingReport& r) {
  const auto lh = local_hash_shape(metric);
  if (r.hash_a >> lh.field_bits != 0 || r.hash_b >> lh.field_bits != 0 ||
      r.value >> lh.bucket_bits != 0) {
    return "hash seed or bucket outside the family of " + describe(metric);
  }
  return {};
}

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
// The support of values[0..count) into support[0..count): one transform,
// then each value's 2^b terms.
void local_hash_support_at(const MetricConfig& metric, const uint64_t* tally, uint64_t,
                           const uint32_t* values, size_t count, uint64_t* support) {
  const auto shape = local_hash_shape(metric);
  const uint32_t k = shape.field_bits, b = shape.bucket_bits, shift = k - b;
  std::vector<int64_t> w(tally, tally + (size_t{1} << (k + b)));
  walsh_hadamard(w);
  for (size_t listed = 0; listed < count; ++listed) {
    const uint32_t v = values[listed];
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
    support[listed] = static_cast<uint64_t>(sum >> b);
  }
}

void local_hash_support(const MetricConfig& metric, const uint64_t* tally, uint64_t reports,
                        uint64_t* support) {
  std::vector<uint32_t> every(metric.domain_size);
  for (uint32_t v = 0; v < metric.domain_size; ++v) every[v] = v;
  local_hash_support_at(metric, tally, reports, every.data(), every.size(), support);
}

// Randomized response over g buckets; another value shares the bucket with
// probability 1/g exactly (pairwise-independent family).
OracleParams local_hash(const MetricConfig& metric) {
  const double g = static_cast<double>(1u << local_hash_shape(metric).bucket_bits);
  return OracleParams{randomized_response_params(metric.epsilon_micros, static_cast<uint32_t>(g)).p,
                      1.0 / g};
}

std::string loloha_check(const MetricConfig& metric) {
  if (metric.longitudinal_epsilon_micros == 0) {
    return "loloha needs a longitudinal epsilon (longitudinal=E)";
  }
  return {};
}

MechanismSpec local_hashing_spec(MechanismId id) {
  MechanismSpec spec;
  spec.id = id;
  spec.max_domain = mechanism_max_domain(id);
  spec.payload_error = local_hash_error;
  spec.tally_size = local_hash_tally_size;
  spec.tally = tally_local_hash;
  spec.support = local_hash_support;
  spec.support_at = local_hash_support_at;
  spec.params = local_hash;
  return spec;
}

}  // namespace

template <>
MechanismSpec make_spec<MechanismId::kOptimizedLocalHashing>() {
  return local_hashing_spec(MechanismId::kOptimizedLocalHashing);
}

template <>
MechanismSpec make_spec<MechanismId::kBinaryLocalHashing>() {
  return local_hashing_spec(MechanismId::kBinaryLocalHashing);
}

// LOLOHA: local hashing's tally and support (a report supports v iff
// h_{a,b}(v) = y), with the two-stage p; memoized by definition.
template <>
MechanismSpec make_spec<MechanismId::kLoloha>() {
  MechanismSpec spec = local_hashing_spec(MechanismId::kLoloha);
  spec.memoizable = true;
  spec.check = loloha_check;
  spec.params = loloha_params;
  return spec;
}

}  // namespace blur::collector
