#include "estimate/support_counter.h"

#include <algorithm>

#include "blur/bloom_hash.h"
#include "blur/hadamard_response.h"

namespace blur::collector {

namespace {

bool is_hadamard(const MetricConfig& metric) {
  return metric.mechanism == Mechanism::kHadamardResponse;
}

bool is_bloom(const MetricConfig& metric) {
  return payload_shape(metric.mechanism) == PayloadShape::kBloom;
}

bool is_local_hash(const MetricConfig& metric) {
  return payload_shape(metric.mechanism) == PayloadShape::kLocalHash;
}

size_t tally_size(const MetricConfig& metric) {
  if (is_hadamard(metric)) return hadamard_size(metric.domain_size);
  if (is_local_hash(metric)) {
    const auto shape = local_hash_shape(metric);
    return size_t{1} << (shape.field_bits + shape.bucket_bits);
  }
  if (is_bloom(metric)) return 0;
  return metric.domain_size;
}

size_t bit_vector_bytes(const MetricConfig& metric) {
  return is_bloom(metric) ? metric.rappor.bloom_bits / 8 : (metric.domain_size + 7) / 8;
}

// Per-bit totals of a (bytes x 256) tally of byte values.
void expand_byte_tally(const uint64_t* rows, size_t bytes, uint64_t* bit_counts) {
  for (size_t byte = 0; byte < bytes; ++byte) {
    const uint64_t* row = rows + 256 * byte;
    for (unsigned pattern = 1; pattern < 256; ++pattern) {
      if (row[pattern] == 0) continue;
      for (unsigned set = pattern; set != 0; set &= set - 1) {
        bit_counts[8 * byte + static_cast<size_t>(__builtin_ctz(set))] += row[pattern];
      }
    }
  }
}

}  // namespace

SupportCounter::SupportCounter(const MetricConfig& metric)
    : metric_(metric), tally_(tally_size(metric), 0) {
  const PayloadShape shape = payload_shape(metric.mechanism);
  if (shape == PayloadShape::kBits || shape == PayloadShape::kBloom) {
    const size_t cohorts = shape == PayloadShape::kBloom ? metric.rappor.cohort_count : 1;
    byte_tally_.assign(cohorts * 256 * bit_vector_bytes(metric), 0);
  }
}

void SupportCounter::add(uint64_t report_value, const std::string& bits, uint64_t multiplicity) {
  reports_ += multiplicity;
  if (is_local_hash(metric_)) {
    const auto shape = local_hash_shape(metric_);
    const uint64_t a = report_value >> 32, b = (report_value >> 16) & 0xFFFF;
    const uint64_t key = (report_value & 0xFFFF) ^ (b >> (shape.field_bits - shape.bucket_bits));
    const uint64_t slot = a << shape.bucket_bits | key;
    if (slot < tally_.size()) tally_[slot] += multiplicity;
    return;
  }
  if (byte_tally_.empty()) {
    // rr/grr: the value itself; hr: the histogram of j, transformed in counts().
    if (report_value < tally_.size()) tally_[report_value] += multiplicity;
    return;
  }
  const size_t row_bytes = bit_vector_bytes(metric_);
  size_t cohort = 0;
  if (is_bloom(metric_)) {
    if (report_value >= metric_.rappor.cohort_count) return;  // validated before; never counted
    cohort = static_cast<size_t>(report_value);
  }
  const size_t bytes = std::min(bits.size(), row_bytes);
  uint64_t* row = byte_tally_.data() + cohort * 256 * row_bytes;
  for (size_t byte = 0; byte < bytes; ++byte, row += 256) {
    row[static_cast<uint8_t>(bits[byte])] += multiplicity;
  }
}

std::vector<uint64_t> SupportCounter::counts() const {
  if (is_bloom(metric_)) return bloom_counts();
  if (!byte_tally_.empty()) {
    const size_t bytes = bit_vector_bytes(metric_);
    std::vector<uint64_t> support(8 * bytes, 0);
    expand_byte_tally(byte_tally_.data(), bytes, support.data());
    support.resize(metric_.domain_size);
    return support;
  }
  if (is_local_hash(metric_)) {
    const auto shape = local_hash_shape(metric_);
    const uint32_t shift = shape.field_bits - shape.bucket_bits;
    std::vector<uint64_t> support(metric_.domain_size, 0);
    for (uint32_t a = 0; a < (1u << shape.field_bits); ++a) {
      const uint64_t* row = &tally_[size_t{a} << shape.bucket_bits];
      bool any = false;
      for (uint32_t key = 0; key < (1u << shape.bucket_bits) && !any; ++key) any = row[key] != 0;
      if (!any) continue;
      for (uint32_t v = 0; v < metric_.domain_size; ++v) {
        support[v] += row[blur::gf2_multiply(a, v, shape.field_bits) >> shift];
      }
    }
    return support;
  }
  if (!is_hadamard(metric_)) return tally_;
  // Fast Walsh-Hadamard transform: w[u] = sum_j tally[j] (-1)^popcount(u & j).
  // Report j supports v iff row v + 1 is +1 at j, so I_v = (n + w[v + 1]) / 2.
  std::vector<int64_t> w(tally_.begin(), tally_.end());
  for (size_t half = 1; half < w.size(); half <<= 1) {
    for (size_t block = 0; block < w.size(); block += 2 * half) {
      for (size_t i = block; i < block + half; ++i) {
        const int64_t a = w[i], b = w[i + half];
        w[i] = a + b;
        w[i + half] = a - b;
      }
    }
  }
  std::vector<uint64_t> support(metric_.domain_size);
  for (uint32_t v = 0; v < metric_.domain_size; ++v) {
    support[v] = static_cast<uint64_t>((static_cast<int64_t>(reports_) + w[v + 1]) / 2);
  }
  return support;
}

std::vector<uint64_t> SupportCounter::bloom_counts() const {
  const RapporShape& shape = metric_.rappor;
  const size_t bytes = bit_vector_bytes(metric_);
  std::vector<uint64_t> support(metric_.domain_size, 0);
  std::vector<uint64_t> bit_counts(shape.bloom_bits);
  for (uint32_t cohort = 0; cohort < shape.cohort_count; ++cohort) {
    const uint64_t* rows = byte_tally_.data() + size_t{cohort} * 256 * bytes;
    std::fill(bit_counts.begin(), bit_counts.end(), 0);
    expand_byte_tally(rows, bytes, bit_counts.data());
    if (std::all_of(bit_counts.begin(), bit_counts.end(), [](uint64_t c) { return c == 0; })) {
      continue;  // no reports in this cohort
    }
    for (uint32_t v = 0; v < metric_.domain_size; ++v) {
      char text[10];
      const size_t length = blur::decimal_text(v, text);
      uint16_t positions[blur::kMaxBloomHashes];
      if (blur::bloom_positions(blur::BloomHashKey{metric_.id, metric_.hash_key}, cohort,
                                reinterpret_cast<const uint8_t*>(text), length, shape.bloom_bits,
                                shape.hash_count, positions) != blur::Status::kOk) {
        continue;  // unreachable: the shape was validated and SHA-256 does not fail
      }
      for (uint32_t j = 0; j < shape.hash_count; ++j) support[v] += bit_counts[positions[j]];
    }
  }
  return support;
}

}  // namespace blur::collector
