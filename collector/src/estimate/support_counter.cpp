#include "estimate/support_counter.h"

#include <algorithm>

#include "blur/hadamard_response.h"

namespace blur::collector {

namespace {

bool is_hadamard(const MetricConfig& metric) {
  return metric.mechanism == Mechanism::kHadamardResponse;
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
  return metric.domain_size;
}

}  // namespace

SupportCounter::SupportCounter(const MetricConfig& metric)
    : metric_(metric), tally_(tally_size(metric), 0) {
  if (payload_shape(metric.mechanism) == PayloadShape::kBits) {
    byte_tally_.assign(256 * ((metric.domain_size + 7) / 8), 0);
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
  if (payload_shape(metric_.mechanism) != PayloadShape::kBits) {
    // rr/grr: the value itself; hr: the histogram of j, transformed in counts().
    if (report_value < tally_.size()) tally_[report_value] += multiplicity;
    return;
  }
  const size_t bytes = std::min(bits.size(), byte_tally_.size() / 256);
  uint64_t* row = byte_tally_.data();
  for (size_t byte = 0; byte < bytes; ++byte, row += 256) {
    row[static_cast<uint8_t>(bits[byte])] += multiplicity;
  }
}

std::vector<uint64_t> SupportCounter::counts() const {
  if (!byte_tally_.empty()) {
    std::vector<uint64_t> support(metric_.domain_size, 0);
    for (size_t byte = 0; byte < byte_tally_.size() / 256; ++byte) {
      const uint64_t* row = &byte_tally_[256 * byte];
      for (unsigned pattern = 1; pattern < 256; ++pattern) {
        if (row[pattern] == 0) continue;
        for (unsigned set = pattern; set != 0; set &= set - 1) {
          const size_t value = 8 * byte + static_cast<size_t>(__builtin_ctz(set));
          if (value < support.size()) support[value] += row[pattern];
        }
      }
    }
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

}  // namespace blur::collector
