#include "discovery/level_tally.h"

#include <algorithm>

#include "blur/discovery/prefix_extension.h"

namespace blur::collector {

namespace {
}  // namespace

uint32_t LevelTally::Level::columns() const {
  return dense != nullptr ? blur::kPrefixHashSeeds : static_cast<uint32_t>(seeds.size());
}

LevelTally::LevelTally(const MetricConfig& metric, const std::vector<uint64_t>& tally)
    : bits_(blur::PrefixExtension::bucket_bits(metric.epsilon_micros)),
      levels_(blur::PrefixExtension::levels(metric.domain_size)) {
  const size_t per_level = size_t{blur::kPrefixHashSeeds} << bits_;
  for (uint32_t l = 0; l < levels(); ++l) {
    Level& level = levels_[l];
    level.dense = tally.data() + l * per_level;
    for (size_t i = 0; i < per_level; ++i) level.reports += level.dense[i];
  }
}

LevelTally::LevelTally(const Aggregate& aggregate)
    : bits_(blur::PrefixExtension::bucket_bits(aggregate.metric().epsilon_micros)),
      levels_(blur::PrefixExtension::levels(aggregate.metric().domain_size)) {
  if (const std::vector<uint64_t>* dense = aggregate.dense_tally()) {
    const size_t per_level = size_t{blur::kPrefixHashSeeds} << bits_;
    for (uint32_t l = 0; l < levels(); ++l) {
      Level& level = levels_[l];
      level.dense = dense->data() + l * per_level;
      for (size_t i = 0; i < per_level; ++i) level.reports += level.dense[i];
    }
    return;
  }
  // Cell index = (level * seeds + seed) << bits | bucket (mechanism_spec.cpp):
  // ordered by (level, seed), sorted when few, counted into place when many.
  std::vector<std::pair<uint64_t, uint64_t>> cells;
  aggregate.for_each_tally_cell(
      [&](uint64_t cell, uint64_t count) { cells.emplace_back(cell, count); });
  const size_t keys = size_t{levels()} * blur::kPrefixHashSeeds;
  if (cells.size() < blur::kPrefixHashSeeds) {
    std::sort(cells.begin(), cells.end());
  } else {
    std::vector<uint32_t> start(keys + 1, 0);
    for (const auto& cell : cells) ++start[(cell.first >> bits_) + 1];
    for (size_t k = 0; k < keys; ++k) start[k + 1] += start[k];
    std::vector<std::pair<uint64_t, uint64_t>> ordered(cells.size());
    for (const auto& cell : cells) ordered[start[cell.first >> bits_]++] = cell;
    cells.swap(ordered);
  }
  std::vector<uint64_t> per_level(levels(), 0);
  for (const auto& cell : cells) ++per_level[(cell.first >> bits_) / blur::kPrefixHashSeeds];
  std::vector<uint64_t*> writable(levels(), nullptr);  // the densified levels
  dense_storage_.reserve(levels());
  for (uint32_t l = 0; l < levels(); ++l) {
    if (per_level[l] < uint64_t{kDenseCellsPerSeed} * blur::kPrefixHashSeeds) continue;
    dense_storage_.emplace_back(size_t{blur::kPrefixHashSeeds} << bits_, 0);
    writable[l] = dense_storage_.back().data();
    levels_[l].dense = writable[l];
  }
  const uint32_t bucket_mask = (1u << bits_) - 1;
  for (const auto& [cell, count] : cells) {
    const uint64_t key = cell >> bits_;
    const uint32_t l = static_cast<uint32_t>(key / blur::kPrefixHashSeeds);
    const uint32_t seed = static_cast<uint32_t>(key % blur::kPrefixHashSeeds);
    const uint32_t bucket = static_cast<uint32_t>(cell) & bucket_mask;
    Level& level = levels_[l];
    level.reports += count;
    if (writable[l] != nullptr) {
      writable[l][(size_t{seed} << bits_) | bucket] = count;
      continue;
    }
    if (level.seeds.empty() || level.seeds.back() != seed) {
      level.seeds.push_back(seed);
      level.first.push_back(static_cast<uint32_t>(level.buckets.size()));
    }
    level.buckets.push_back(static_cast<uint8_t>(bucket));
    level.counts.push_back(count);
  }
  for (Level& level : levels_) {
    if (level.dense == nullptr) level.first.push_back(static_cast<uint32_t>(level.buckets.size()));
  }
}

}  // namespace blur::collector
