#include "aggregate/aggregate.h"

#include <algorithm>
#include <random>

#include "mechanisms/mechanism_spec.h"
#include "util/varint.h"

namespace blur::collector {

namespace {
constexpr uint8_t kFormatVersion = 1;

// splitmix64's finalizer (Steele, Lea, Flood 2014): a bijective mixer.
uint64_t mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// The fingerprint's key: secret, so crafted reports cannot aim at a
// collision with another range's aggregate.
uint64_t fingerprint_key() {
  static const uint64_t key = [] {
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device();
  }();
  return key;
}

// One (cell, count) pair's term of the fingerprint's sum.
uint64_t cell_term(uint64_t key, uint64_t cell, uint64_t count) {
  return mix(mix(cell ^ key) + count);
}

// Writes a sparse tally's nonzero cells, given in increasing order, as the
// dense tally's bytes: counts, and 0 followed by the length of each run of
// zeros.
class SortedCellWriter {
 public:
  SortedCellWriter(std::string* out, uint64_t length) : out_(out), length_(length) {
    put_varint(out_, length_);
  }
  void add(uint64_t cell, uint64_t count) {
    if (cell > next_) {
      put_varint(out_, 0);
      put_varint(out_, cell - next_);
    }
    put_varint(out_, count);
    next_ = cell + 1;
  }
  void finish() {
    if (next_ < length_) {
      put_varint(out_, 0);
      put_varint(out_, length_ - next_);
    }
  }

 private:
  std::string* out_;
  uint64_t length_;
  uint64_t next_ = 0;
};

// Reads a tally's bytes (after its length) as its nonzero cells, in
// increasing order; untrusted bytes, so every step is checked.
class SortedCellReader {
 public:
  SortedCellReader(VarintReader* reader, uint64_t length) : reader_(reader), length_(length) {}
  // The next nonzero cell; false at the end or on bad bytes (then
  // problem() says what).
  bool next(uint64_t* cell, uint64_t* count) {
    while (at_ < length_) {
      uint64_t value = 0;
      if (!reader_->next(&value)) return fail("truncated tally");
      if (value != 0) {
        *cell = at_++;
        *count = value;
        return true;
      }
      uint64_t run = 0;
      if (!reader_->next(&run) || run == 0 || run > length_ - at_) return fail("bad run of zeros");
      at_ += run;
    }
    if (!reader_->done()) return fail("trailing bytes");
    return false;
  }
  const char* problem() const { return problem_; }

 private:
  bool fail(const char* what) {
    problem_ = what;
    at_ = length_;
    return false;
  }
  VarintReader* reader_;
  uint64_t length_;
  uint64_t at_ = 0;
  const char* problem_ = nullptr;
};
}  // namespace

Aggregate::Aggregate(const MetricConfig& metric)
    : spec_(&mechanism_spec(metric.mechanism)), metric_(metric) {
  if (spec_->numeric) return;
  const size_t length = spec_->tally_size(metric);
  if (spec_->cell != nullptr && length > kSparseTallyCells) {
    sparse_length_ = length;
  } else {
    tally_.assign(length, 0);
  }
}

std::vector<uint64_t> Aggregate::tally() const {
  if (sparse_length_ == 0) return tally_;
  std::vector<uint64_t> dense(sparse_length_, 0);
  sparse_cells_.for_each([&](uint64_t cell, uint64_t count) { dense[cell] = count; });
  return dense;
}

bool Aggregate::numeric() const { return spec_->numeric; }

uint64_t Aggregate::fingerprint() const {
  const uint64_t key = fingerprint_key();
  uint64_t sum = mix(key ^ (static_cast<uint64_t>(metric_.mechanism) << 56) ^ metric_.id);
  sum = mix(sum + reports_);
  uint64_t terms = 0;
  if (spec_->numeric) {
    // Values may be negative: their two's complement is a distinct cell.
    for (const auto& [value, count] : summary_.histogram()) {
      terms += cell_term(key, static_cast<uint64_t>(value), count);
    }
  } else {
    for_each_tally_cell(
        [&](uint64_t cell, uint64_t count) { terms += cell_term(key, cell, count); });
  }
  return mix(sum ^ terms);
}

void Aggregate::add(const IncomingReport& report, uint64_t multiplicity) {
  reports_ += multiplicity;
  if (spec_->numeric) {
    summary_.add(
        report.payload == PayloadKind::kNumber ? report.number : static_cast<int64_t>(report.value),
        multiplicity);
  } else if (sparse_length_ != 0) {
    sparse_cells_[spec_->cell(metric_, report)] += multiplicity;
  } else {
    spec_->tally(metric_, report, multiplicity, tally_.data());
  }
}

void Aggregate::merge(const Aggregate& other) {
  reports_ += other.reports_;
  for (size_t i = 0; i < tally_.size() && i < other.tally_.size(); ++i)
    tally_[i] += other.tally_[i];
  sparse_cells_.reserve(sparse_cells_.size() + other.sparse_cells_.size());
  other.sparse_cells_.for_each(
      [&](uint64_t cell, uint64_t count) { sparse_cells_[cell] += count; });
  for (const auto& [value, count] : other.summary_.histogram()) summary_.add(value, count);
}

std::vector<uint64_t> Aggregate::support_counts() const {
  std::vector<uint64_t> support(metric_.domain_size, 0);
  if (spec_->support == nullptr) return support;
  // A dense tally is read in place, a sparse one filled in first.
  const std::vector<uint64_t> filled = sparse_length_ == 0 ? std::vector<uint64_t>() : tally();
  spec_->support(metric_, sparse_length_ == 0 ? tally_.data() : filled.data(), reports_,
                 support.data());
  return support;
}

std::vector<uint64_t> Aggregate::support_counts(const std::vector<uint32_t>& values) const {
  std::vector<uint64_t> support(values.size(), 0);
  if (spec_->support == nullptr) return support;
  if (spec_->support_at == nullptr) {
    const std::vector<uint64_t> every = support_counts();
    for (size_t i = 0; i < values.size(); ++i) support[i] = every[values[i]];
    return support;
  }
  const std::vector<uint64_t> filled = sparse_length_ == 0 ? std::vector<uint64_t>() : tally();
  spec_->support_at(metric_, sparse_length_ == 0 ? tally_.data() : filled.data(), reports_,
                    values.data(), values.size(), support.data());
  return support;
}

// Layout: version, mechanism id, varint reports; then for a tally its
// length and the counts, a zero count written as 0 followed by the length
// of its run of zeros; for numeric mechanisms the number of histogram
// entries and each entry as (zigzag delta of the value, count).
std::string Aggregate::serialize() const {
  std::string out;
  out.push_back(static_cast<char>(kFormatVersion));
  out.push_back(static_cast<char>(metric_.mechanism));
  put_varint(&out, reports_);
  if (spec_->numeric) {
    put_varint(&out, summary_.histogram().size());
    int64_t previous = 0;
    for (const auto& [value, count] : summary_.histogram()) {
      put_varint(&out, zigzag(static_cast<int64_t>(static_cast<uint64_t>(value) -
                                                   static_cast<uint64_t>(previous))));
      put_varint(&out, count);
      previous = value;
    }
    return out;
  }
  if (sparse_length_ != 0) {
    // The same bytes as the dense tally's: counts and runs of zeros.
    std::vector<std::pair<uint64_t, uint64_t>> cells;
    sparse_cells_.for_each([&](uint64_t cell, uint64_t count) {
      if (count != 0) cells.emplace_back(cell, count);
    });
    std::sort(cells.begin(), cells.end());
    SortedCellWriter writer(&out, sparse_length_);
    for (const auto& [cell, count] : cells) writer.add(cell, count);
    writer.finish();
    return out;
  }
  put_varint(&out, tally_.size());
  for (size_t i = 0; i < tally_.size();) {
    if (tally_[i] != 0) {
      put_varint(&out, tally_[i++]);
      continue;
    }
    size_t run = 0;
    while (i < tally_.size() && tally_[i] == 0) ++i, ++run;
    put_varint(&out, 0);
    put_varint(&out, run);
  }
  return out;
}

void Aggregate::reserve_serialized(size_t bytes) {
  // A sparse tally's cell takes a count and, mostly, a run of zeros before
  // it: about 4 bytes (pem: 3.6), and more rows than cells rarely share one.
  if (sparse_length_ != 0) sparse_cells_.reserve(sparse_cells_.size() + bytes / 4);
}

Error Aggregate::corrupt(const char* what) const {
  return invalid("stored aggregate of " + describe(metric_) + " is corrupt: " + what);
}

Outcome<uint64_t> Aggregate::read_header(std::string_view bytes, VarintReader* reader) const {
  if (bytes.size() < 2) return corrupt("truncated header");
  if (static_cast<uint8_t>(bytes[0]) != kFormatVersion) return corrupt("unknown format version");
  if (static_cast<uint8_t>(bytes[1]) != static_cast<uint8_t>(metric_.mechanism)) {
    return corrupt("another mechanism's aggregate");
  }
  *reader = VarintReader(bytes.substr(2));
  uint64_t reports = 0;
  if (!reader->next(&reports)) return corrupt("truncated report count");
  if (reports_ + reports < reports_) return corrupt("report count overflows");
  return reports;
}

Outcome<Aggregate> Aggregate::deserialize(const MetricConfig& metric, std::string_view bytes) {
  Aggregate aggregate(metric);
  if (auto added = aggregate.add_serialized(bytes); !added) return added.error();
  return aggregate;
}

// One pass: the tally is added to in place as it is read; if the bytes turn
// out bad part-way, a second reading of them takes back what was added.
Fallible Aggregate::add_serialized(std::string_view bytes) {
  auto bad = [&](const char* what) { return corrupt(what); };
  VarintReader reader(bytes);
  auto header = read_header(bytes, &reader);
  if (!header) return header.error();
  const uint64_t reports = header.value();
  if (numeric()) {
    uint64_t entries = 0;
    if (!reader.next(&entries) || entries > bytes.size()) return bad("bad histogram size");
    std::vector<std::pair<int64_t, uint64_t>> histogram;
    uint64_t total = 0;
    uint64_t value = 0;  // two's complement arithmetic: deltas wrap like the writer's
    for (uint64_t i = 0; i < entries; ++i) {
      uint64_t delta = 0, count = 0;
      if (!reader.next(&delta) || !reader.next(&count)) return bad("truncated histogram");
      if (count == 0 || (i > 0 && unzigzag(delta) <= 0)) return bad("histogram out of order");
      value += static_cast<uint64_t>(unzigzag(delta));
      if (total + count < total) return bad("histogram count overflows");
      total += count;
      histogram.emplace_back(static_cast<int64_t>(value), count);
    }
    if (total != reports) return bad("histogram does not add up to the report count");
    if (!reader.done()) return bad("trailing bytes");
    for (const auto& [v, count] : histogram) summary_.add(v, count);
    reports_ += reports;
    return done();
  }
  if (sparse_length_ != 0) {
    if (auto added = add_sparse(bytes.substr(2), reports); !added) return bad(added.error().message.c_str());
    return done();
  }
  uint64_t length = 0;
  if (!reader.next(&length) || length != tally_.size()) {
    return bad("tally length does not match the metric's shape");
  }
  size_t i = 0;
  const char* problem = nullptr;
  while (i < length) {
    uint64_t count = 0;
    if (!reader.next(&count)) {
      problem = "truncated tally";
      break;
    }
    if (count != 0) {
      if (tally_[i] + count < count) {
        problem = "tally count overflows";
        break;
      }
      tally_[i++] += count;
      continue;
    }
    uint64_t run = 0;
    if (!reader.next(&run) || run == 0 || run > length - i) {
      problem = "bad run of zeros";
      break;
    }
    i += run;
  }
  if (problem == nullptr && !reader.done()) problem = "trailing bytes";
  if (problem != nullptr) {
    // Undo: read the same bytes again up to where the first pass stopped.
    VarintReader again(bytes.substr(2));
    uint64_t skip = 0;
    again.next(&skip);
    again.next(&skip);
    for (size_t j = 0; j < i;) {
      uint64_t count = 0;
      again.next(&count);
      if (count != 0) {
        tally_[j++] -= count;
        continue;
      }
      uint64_t run = 0;
      again.next(&run);
      j += run;
    }
    return bad(problem);
  }
  reports_ += reports;
  return done();
}

// The tally part of serialized bytes (after the header) into the sparse
// cells: read whole first, so bad bytes change nothing.
Fallible Aggregate::add_sparse(std::string_view bytes, uint64_t reports) {
  VarintReader reader(bytes);
  uint64_t skip = 0, length = 0;
  reader.next(&skip);  // the report count, read by the caller
  if (!reader.next(&length) || length != sparse_length_) {
    return invalid("tally length does not match the metric's shape");
  }
  std::vector<std::pair<uint64_t, uint64_t>> cells;
  SortedCellReader stored(&reader, length);
  uint64_t next_cell = 0, next_count = 0;
  while (stored.next(&next_cell, &next_count)) cells.emplace_back(next_cell, next_count);
  if (stored.problem() != nullptr) return invalid(stored.problem());
  for (const auto& [cell, count] : cells) {
    if (sparse_cells_.find(cell) + count < count) {
      return invalid("tally count overflows");
    }
  }
  sparse_cells_.reserve(sparse_cells_.size() + cells.size());
  for (const auto& [cell, count] : cells) sparse_cells_[cell] += count;
  reports_ += reports;
  return done();
}

Outcome<Aggregate::SerializedSum> Aggregate::serialize_added_to(std::string_view stored) const {
  if (sparse_length_ == 0) {
    auto total = deserialize(metric_, stored);
    if (!total) return total.error();
    total.value().merge(*this);
    return SerializedSum{total.value().serialize(), total.value().reports()};
  }
  // A sparse tally: one pass over the stored cells (in order) and this
  // aggregate's (sorted), as serialize() of the sum writes them.
  auto bad = [&](const char* what) { return corrupt(what); };
  VarintReader reader(stored);
  auto header = read_header(stored, &reader);
  if (!header) return header.error();
  const uint64_t stored_reports = header.value();
  uint64_t length = 0;
  if (!reader.next(&length) || length != sparse_length_) {
    return bad("tally length does not match the metric's shape");
  }
  std::vector<std::pair<uint64_t, uint64_t>> added;
  added.reserve(sparse_cells_.size());
  sparse_cells_.for_each([&](uint64_t cell, uint64_t count) {
    if (count != 0) added.emplace_back(cell, count);
  });
  std::sort(added.begin(), added.end());
  SerializedSum sum{std::string(), reports_ + stored_reports};
  sum.bytes.reserve(stored.size() + 4 * added.size());
  sum.bytes.push_back(static_cast<char>(kFormatVersion));
  sum.bytes.push_back(static_cast<char>(metric_.mechanism));
  put_varint(&sum.bytes, sum.reports);
  SortedCellWriter writer(&sum.bytes, sparse_length_);
  SortedCellReader cells(&reader, length);
  uint64_t cell = 0, count = 0;
  bool more = cells.next(&cell, &count);
  for (const auto& [added_cell, added_count] : added) {
    for (; more && cell < added_cell; more = cells.next(&cell, &count)) writer.add(cell, count);
    if (more && cell == added_cell) {
      if (count + added_count < count) return bad("tally count overflows");
      writer.add(cell, count + added_count);
      more = cells.next(&cell, &count);
    } else {
      writer.add(added_cell, added_count);
    }
  }
  for (; more; more = cells.next(&cell, &count)) writer.add(cell, count);
  if (cells.problem() != nullptr) return bad(cells.problem());
  writer.finish();
  return sum;
}

}  // namespace blur::collector
