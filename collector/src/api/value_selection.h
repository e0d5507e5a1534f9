// The `values` parameter of the estimate and series routes: the values of
// a frequency oracle's domain an answer lists, instead of all d of them.
// A dashboard charting one value over a year asks for that value (365
// estimates) rather than the whole table (at d = 4096, 1.5 million
// estimates and 300 MB of JSON).
//
// Text: values and inclusive ranges, comma-separated ("7", "0-15",
// "1,5,9-12"), each in 0..d-1; repeats and overlaps are allowed and listed
// once. The estimates of the selected values are the same numbers the
// whole table has (norm-sub and RAPPOR's shared-collision variance still
// use every value).
#ifndef BLUR_COLLECTOR_API_VALUE_SELECTION_H
#define BLUR_COLLECTOR_API_VALUE_SELECTION_H

#include <cstdint>
#include <string_view>
#include <vector>

#include "util/outcome.h"

namespace blur::collector {

class ValueSelection {
 public:
  // An error naming the part of `text` that is not a value of the domain.
  static Outcome<ValueSelection> parse(std::string_view text, uint32_t domain_size);

  bool contains(uint32_t value) const { return value < chosen_.size() && chosen_[value]; }
  // Ascending, each once.
  const std::vector<uint32_t>& values() const { return values_; }

 private:
  std::vector<bool> chosen_;  // per value of the domain
  std::vector<uint32_t> values_;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_API_VALUE_SELECTION_H
