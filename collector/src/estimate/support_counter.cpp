#include "estimate/support_counter.h"

#include <algorithm>

#include "blur/hadamard_response.h"

namespace blur::collector {

namespace {

bool is_hadamard(const MetricConfig& metric) {
  return metric.mechanism == Mechanism::kHadamardResponse;
}

}  // namespace

SupportCounter::SupportCounter(const MetricConfig& metric)
    : metric_(metric),
      tally_(is_hadamard(metric) ? hadamard_size(metric.domain_size) : metric.domain_size, 0) {
  if (payload_shape(metric.mechanism) == PayloadShape::kBits) {
    byte_tally_.assign(256 * ((metric.domain_size + 7) / 8), 0);
  }
}

void SupportCounter::add(uint32_t report_value, const std::string& bits, uint64_t multiplicity) {
  reports_ += multiplicity;
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
