// The nonzero cells of a sparse tally (Aggregate): counts by cell index, in
// one flat open-addressing table (linear probing). An
// estimate over 10^6 pem reports merges about 10^6 cells from the stored
// rows; a node-based hash map spent most of such a read allocating,
// rehashing and freeing its nodes. At most 3/4 full: 16 bytes a slot, so
// 10^6 cells take 32 MB.
#ifndef BLUR_COLLECTOR_AGGREGATE_SPARSE_COUNTS_H
#define BLUR_COLLECTOR_AGGREGATE_SPARSE_COUNTS_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace blur::collector {

class SparseCounts {
 public:
  // The count of `cell` (0 if absent).
  uint64_t find(uint64_t cell) const {
    if (slots_.empty()) return 0;
    for (size_t i = slot_of(cell);; i = (i + 1) & mask()) {
      if (slots_[i].key == 0) return 0;
      if (slots_[i].key == cell + 1) return slots_[i].count;
    }
  }
  // A reference to the count of `cell`, added (0) if absent.
  uint64_t& operator[](uint64_t cell) {
    if (!fits(size_ + 1)) grow(size_ + 1);
    size_t i = slot_of(cell);
    for (; slots_[i].key != 0; i = (i + 1) & mask()) {
      if (slots_[i].key == cell + 1) return slots_[i].count;
    }
    slots_[i].key = cell + 1;
    ++size_;
    return slots_[i].count;
  }
  // Room for `cells` cells in all without growing.
  void reserve(size_t cells) {
    if (!fits(cells)) grow(cells);
  }
  size_t size() const { return size_; }
  // f(cell, count) for every cell present, in no particular order.
  template <typename F>
  void for_each(F&& f) const {
    for (const Slot& slot : slots_) {
      if (slot.key != 0) f(slot.key - 1, slot.count);
    }
  }

 private:
  struct Slot {
    uint64_t key = 0;  // cell + 1; 0: empty (cells are tally indices, far below 2^64 - 1)
    uint64_t count = 0;
  };
  size_t mask() const { return slots_.size() - 1; }
  bool fits(size_t cells) const { return cells * 4 <= slots_.size() * 3; }
  // Fibonacci hashing: the top bits of cell * 2^64 / phi.
  size_t slot_of(uint64_t cell) const {
    return static_cast<size_t>((cell * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  // Room for `cells` cells.
  void grow(size_t cells) {
    size_t capacity = 16;
    unsigned bits = 4;
    while (cells * 4 > capacity * 3) capacity <<= 1, ++bits;
    std::vector<Slot> old(capacity);
    old.swap(slots_);
    shift_ = 64 - bits;
    size_ = 0;
    for (const Slot& slot : old) {
      if (slot.key != 0) (*this)[slot.key - 1] = slot.count;
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  unsigned shift_ = 64;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_AGGREGATE_SPARSE_COUNTS_H
