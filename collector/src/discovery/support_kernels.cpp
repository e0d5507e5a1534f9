#include "discovery/support_kernels.h"

#include <algorithm>
#include <array>
#include <atomic>

#include "discovery/discovery_threads.h"

namespace blur::collector {

namespace {

constexpr uint32_t kBlock = 64;                   // columns (seeds) per block
constexpr uint32_t kMaxBuckets = 64;              // 2^g, g <= PrefixExtension::kMaxBucketBits
constexpr uint32_t kMoreCodes = 0x80;  // a first code's flag: other codes share its bucket
// Below this many steps a call runs on one thread: starting threads costs
// more than small tallies' work (a series of hourly buckets is many).
constexpr uint64_t kStepsPerThread = uint64_t{1} << 21;

// Threads for `items` candidates of `steps_each` steps.
unsigned threads_for(size_t items, uint64_t steps_each) {
  const uint64_t wanted = std::max<uint64_t>(1, items * steps_each / kStepsPerThread);
  return static_cast<unsigned>(std::min<uint64_t>({discovery_threads(), items, wanted}));
}

// Steps per candidate on `level`: a lookup per code and seed (dense), or
// one per cell and column (sparse).
uint64_t steps(const LevelTally::Level& level, uint32_t per_seed) {
  return level.dense != nullptr ? uint64_t{level.columns()} * per_seed
                                : level.buckets.size() + level.columns();
}

// The buckets of words[k] (k in `which`) at every column of `level`:
// out[j * columns + i] for which[j] and column i. Many columns: each word
// hashed at every seed at once (a row xor per character); few: column by
// column, every word at that seed, so the characters' rows stay cached.
void hash_columns(const LevelTally::Level& level, const WordHashTable& table,
                  const std::vector<blur::Word>& words, const std::vector<size_t>& which,
                  std::vector<uint8_t>* out) {
  const uint32_t columns = level.columns();
  out->resize(which.size() * columns);
  if (level.dense != nullptr) {
    for (size_t j = 0; j < which.size(); ++j)
      table.hash(words[which[j]], out->data() + j * columns);
    return;
  }
  if (uint64_t{columns} * 16 >= table.seeds()) {
    std::vector<uint8_t> all(table.seeds());
    for (size_t j = 0; j < which.size(); ++j) {
      table.hash(words[which[j]], all.data());
      for (uint32_t i = 0; i < columns; ++i) (*out)[j * columns + i] = all[level.seeds[i]];
    }
    return;
  }
  for (uint32_t i = 0; i < columns; ++i) {
    const uint32_t seed = level.seeds[i];
    for (size_t j = 0; j < which.size(); ++j) {
      const blur::Word& word = words[which[j]];
      uint8_t bucket = 0;
      for (uint32_t p = 0; p < word.length; ++p) bucket ^= table.row(p, word.code(p))[seed];
      (*out)[j * columns + i] = bucket;
    }
  }
}

// The indices t, t + threads, ... below `items`.
std::vector<size_t> strided(size_t items, unsigned t, unsigned threads) {
  std::vector<size_t> mine;
  for (size_t k = t; k < items; k += threads) mine.push_back(k);
  return mine;
}

}  // namespace

bool child_supports(const LevelTally::Level& level, const WordHashTable& table, uint32_t at,
                    const std::vector<blur::Word>& parents, std::vector<uint64_t>* sums,
                    const Cancellation& cancel) {
  sums->assign(parents.size() * blur::kWordAlphabet, 0);
  const uint32_t columns = level.columns();
  if (parents.empty() || columns == 0) return !cancel.requested();
  const uint32_t bits = table.bucket_bits();
  const unsigned threads = threads_for(parents.size(), steps(level, blur::kWordAlphabet));
  std::atomic<bool> cancelled{false};
  run_threads(threads, [&](unsigned t) {
    // This thread's parents and their buckets per column.
    const std::vector<size_t> mine = strided(parents.size(), t, threads);
    std::vector<uint8_t> hashes;
    hash_columns(level, table, parents, mine, &hashes);
    // Per block: each column's code buckets (dense); or (sparse) the
    // block's cells flattened, each with its column and key = column << 6 |
    // bucket, and per key the lowest code whose bucket it is (blur::kWordAlphabet: none,
    // a slot the sums ignore; kMoreCodes set if there are others) and the
    // other such codes as a bit mask (two codes share a bucket at about 7%
    // of keys).
    std::vector<std::array<uint8_t, blur::kWordAlphabet>> code_buckets(kBlock);
    std::vector<uint8_t> cell_column, first_code(level.dense ? 0 : kBlock * kMaxBuckets);
    std::vector<uint16_t> cell_key;
    std::vector<uint64_t> cell_count;
    std::vector<uint32_t> other_codes(level.dense ? 0 : kBlock * kMaxBuckets);
    for (uint32_t start = 0; start < columns; start += kBlock) {
      if (cancelled.load(std::memory_order_relaxed) || cancel.requested()) {
        cancelled = true;
        return;
      }
      const uint32_t end = std::min(columns, start + kBlock);
      for (uint32_t i = start; i < end; ++i) {
        const uint32_t seed = level.seed(i);
        auto& buckets = code_buckets[i - start];
        buckets[0] = 0;
        for (uint32_t c = 1; c < blur::kWordAlphabet; ++c) buckets[c] = table.row(at, c)[seed];
      }
      if (level.dense == nullptr) {
        cell_column.clear();
        cell_key.clear();
        cell_count.clear();
        std::fill(first_code.begin(), first_code.end(), static_cast<uint8_t>(blur::kWordAlphabet));
        std::fill(other_codes.begin(), other_codes.end(), 0u);
        for (uint32_t i = start; i < end; ++i) {
          const uint32_t column = i - start;
          for (uint32_t c = 0; c < blur::kWordAlphabet; ++c) {
            const uint32_t key = column * kMaxBuckets + code_buckets[column][c];
            if (first_code[key] == blur::kWordAlphabet) {
              first_code[key] = static_cast<uint8_t>(c);
            } else {
              first_code[key] |= kMoreCodes;
              other_codes[key] |= 1u << c;
            }
          }
          for (uint32_t j = level.first[i]; j < level.first[i + 1]; ++j) {
            cell_column.push_back(static_cast<uint8_t>(column));
            cell_key.push_back(static_cast<uint16_t>(column * kMaxBuckets + level.buckets[j]));
            cell_count.push_back(level.counts[j]);
          }
        }
      }
      for (size_t k = 0; k < mine.size(); ++k) {
        const uint8_t* parent = hashes.data() + k * columns;
        // Four banks of sums, by cell: consecutive cells adding to one
        // code (mostly to "none") would otherwise wait on each other.
        std::array<std::array<uint64_t, blur::kWordAlphabet + 1>, 4> acc{};  // [blur::kWordAlphabet]: no code's
        if (level.dense != nullptr) {
          for (uint32_t i = start; i < end; ++i) {
            const uint64_t* row = level.dense + (size_t{i} << bits);
            const uint8_t x = parent[i];
            const auto& buckets = code_buckets[i - start];
            for (uint32_t c = 0; c < blur::kWordAlphabet; ++c) acc[0][c] += row[x ^ buckets[c]];
          }
        } else {
          const uint8_t* block = parent + start;
          for (size_t j = 0; j < cell_key.size(); ++j) {
            const uint32_t key = cell_key[j] ^ block[cell_column[j]];
            const uint32_t code = first_code[key];
            auto& bank = acc[j & 3];
            bank[code & ~kMoreCodes] += cell_count[j];
            if ((code & kMoreCodes) == 0) continue;
            for (uint32_t mask = other_codes[key]; mask != 0; mask &= mask - 1) {
              bank[static_cast<uint32_t>(__builtin_ctz(mask))] += cell_count[j];
            }
          }
        }
        uint64_t* out = sums->data() + mine[k] * blur::kWordAlphabet;
        for (uint32_t c = 0; c < blur::kWordAlphabet; ++c)
          out[c] += acc[0][c] + acc[1][c] + acc[2][c] + acc[3][c];
      }
    }
  });
  return !cancelled;
}

bool end_supports(const LevelTally::Level& level, const WordHashTable& table,
                  const std::vector<blur::Word>& words, std::vector<uint64_t>* out,
                  const Cancellation& cancel) {
  out->assign(words.size(), 0);
  const uint32_t columns = level.columns();
  if (words.empty() || columns == 0) return !cancel.requested();
  const uint32_t bits = table.bucket_bits();
  const unsigned threads = threads_for(words.size(), steps(level, 1));
  std::atomic<bool> cancelled{false};
  run_threads(threads, [&](unsigned t) {
    const std::vector<size_t> mine = strided(words.size(), t, threads);
    std::vector<uint8_t> hashes;
    std::vector<uint32_t> cell_column;  // per cell of a column block: its column
    for (size_t first_word = 0; first_word < mine.size(); first_word += kBlock) {
      const std::vector<size_t> batch(
          mine.begin() + static_cast<std::ptrdiff_t>(first_word),
          mine.begin() + static_cast<std::ptrdiff_t>(std::min(mine.size(), first_word + kBlock)));
      hash_columns(level, table, words, batch, &hashes);
      std::array<uint64_t, kBlock> sum{};
      // Column blocks outermost: a block's counts stay cached for every word.
      for (uint32_t start = 0; start < columns; start += kBlock) {
        if (cancelled.load(std::memory_order_relaxed) || cancel.requested()) {
          cancelled = true;
          return;
        }
        const uint32_t end = std::min(columns, start + kBlock);
        if (level.dense != nullptr) {
          for (size_t j = 0; j < batch.size(); ++j) {
            const uint8_t* h = hashes.data() + j * columns;
            uint64_t s = 0;
            for (uint32_t i = start; i < end; ++i) s += level.dense[(size_t{i} << bits) | h[i]];
            sum[j] += s;
          }
          continue;
        }
        const uint32_t from = level.first[start], to = level.first[end];
        cell_column.clear();
        for (uint32_t i = start; i < end; ++i) {
          cell_column.insert(cell_column.end(), level.first[i + 1] - level.first[i], i);
        }
        for (size_t j = 0; j < batch.size(); ++j) {
          const uint8_t* h = hashes.data() + j * columns;
          uint64_t s = 0;
          for (uint32_t c = from; c < to; ++c) {
            s += level.buckets[c] == h[cell_column[c - from]] ? level.counts[c] : 0;
          }
          sum[j] += s;
        }
      }
      for (size_t j = 0; j < batch.size(); ++j) (*out)[batch[j]] = sum[j];
    }
  });
  return !cancelled;
}

}  // namespace blur::collector
