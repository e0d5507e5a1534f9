#include "discovery/fragment_puzzle_discovery.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <string>

#include "blur/discovery/fragment_puzzle.h"
#include "discovery/discovery_threads.h"

namespace blur::collector {

namespace {

using blur::SequenceFragmentPuzzle;

constexpr uint32_t kFragmentSeeds = blur::kFragmentHashSeeds;
constexpr uint32_t kPieces = blur::kPuzzlePieces;
constexpr uint32_t kPairs = blur::kWordAlphabet * blur::kWordAlphabet;
// A fragment joins candidates when its estimate is this many standard
// errors (the fragment seed table's included) above zero: low, because a
// candidate must also hash to its piece (1 in 256 chance for a join of
// noise) and then pass the word sketch.
constexpr double kFragmentZ = 2.0;
// The strongest significant fragments kept per (position, piece): about 17
// of the 757 pairs of noise pass kFragmentZ by chance. Without the table's
// error the heavy fragments' collisions passed as well: at 10^6 devices
// (docs/discovery.md's benchmark) 15,900 triples a position against 4,600.
constexpr size_t kFragmentsPerPiece = 32;
constexpr uint32_t kDefaultBeam = 256;  // unfinished joins kept per piece

bool possible_pair(uint32_t position, uint32_t first, uint32_t second) {
  if (first == blur::kWordEnd) return position != 0 && second == blur::kWordEnd;
  return true;
}

struct Fragment {
  uint32_t first, second;
  double count;
};

struct JoinedWord {
  blur::Word word;
  double score;  // the sum of the joined fragments' estimates
};

bool stronger(const JoinedWord& x, const JoinedWord& y) {
  return x.score > y.score ||
         (x.score == y.score &&
          (x.word.low < y.word.low || (x.word.low == y.word.low && x.word.high < y.word.high)));
}

void keep_strongest(std::vector<JoinedWord>* candidates, size_t width) {
  if (candidates->size() <= width) return;
  std::nth_element(candidates->begin(), candidates->begin() + static_cast<std::ptrdiff_t>(width),
                   candidates->end(), stronger);
  candidates->resize(width);
}

// Whether a position with `cells` nonzero cells of 2^g buckets is read cell
// by cell: a cell costs a step per pair and matching piece (1 + 256 / 2^g
// per pair), a seed of the dense pass 256 lookups per pair; cell by cell
// when that is under half the dense work.
bool read_cell_by_cell(size_t cells, uint32_t buckets) {
  return cells * (1 + kPieces / buckets) * 2 < size_t{kFragmentSeeds} * kPieces;
}

// The puzzle piece as a table: the piece hash is linear like the others
// (puzzle_piece(): seed 0 of key level kPuzzlePieceKeyLevel, 8 bits), so
// a word's piece is the xor of its characters' rows, without the GF(2^64)
// products.
uint32_t piece_of(const WordHashTable& pieces, const blur::Word& word) {
  uint8_t piece = 0;
  for (uint32_t i = 0; i < word.length; ++i) piece ^= pieces.row(i, word.code(i))[0];
  return piece;
}

}  // namespace

FragmentPuzzleDecoder::FragmentPuzzleDecoder(const MetricConfig& metric,
                                             const std::vector<uint64_t>& tally, uint64_t reports)
    : tally_(tally),
      reports_(reports),
      shape_(fragment_puzzle_shape(metric)),
      params_(fragment_puzzle_params(metric)),
      word_table_(shared_word_table(SequenceFragmentPuzzle::kWordKeyLevel, metric.domain_size,
                                    blur::kPrefixHashSeeds, shape_.bucket_bits)),
      position_reports_(shape_.positions, 0) {
  for (uint32_t position = 0; position < shape_.positions; ++position) {
    const uint64_t* counts = tally_.data() + shape_.fragment_offset(position);
    for (size_t i = 0; i < (size_t{kFragmentSeeds} << shape_.bucket_bits); ++i) {
      position_reports_[position] += counts[i];
    }
  }
}

CountEstimate FragmentPuzzleDecoder::scaled(uint64_t pooled_reports, uint64_t support) const {
  return scaled_count(reports_, pooled_reports, support, params_);
}

// support[(first * 28 + second) * 256 + piece] = sum over seeds s of the
// tally at (position, s, bucket_s(piece) xor bucket_s(first, second)).
std::vector<uint64_t> FragmentPuzzleDecoder::fragment_support(uint32_t position,
                                                              const Cancellation& cancel) const {
  const uint32_t bits = shape_.bucket_bits, shift = 64 - bits;
  const uint32_t buckets = 1u << bits;
  const uint64_t* counts = tally_.data() + shape_.fragment_offset(position);
  std::vector<uint8_t> piece_bucket(size_t{kFragmentSeeds} * kPieces);
  std::vector<uint8_t> pair_bucket(size_t{kPairs} * kFragmentSeeds);
  for (uint32_t s = 0; s < kFragmentSeeds; ++s) {
    // image[j]: the bucket of the value 2^j.
    uint8_t image[blur::kFragmentValueBits];
    uint64_t a = blur::prefix_hash_key(1 + position, s).a;
    for (uint32_t j = 0; j < blur::kFragmentValueBits; ++j) {
      image[j] = static_cast<uint8_t>(a >> shift);
      a = blur::gf64_times_x(a);
    }
    for (uint32_t piece = 0; piece < kPieces; ++piece) {
      uint8_t bucket = 0;
      for (uint32_t j = 0; j < blur::kPuzzlePieceBits; ++j) {
        if ((piece >> j) & 1u) bucket ^= image[j];
      }
      piece_bucket[size_t{s} * kPieces + piece] = bucket;
    }
    for (uint32_t pair = 0; pair < kPairs; ++pair) {
      const uint64_t value =
          blur::fragment_value(0, pair / blur::kWordAlphabet, pair % blur::kWordAlphabet);
      uint8_t bucket = 0;
      for (uint32_t j = blur::kPuzzlePieceBits; j < blur::kFragmentValueBits; ++j) {
        if ((value >> j) & 1u) bucket ^= image[j];
      }
      pair_bucket[size_t{pair} * kFragmentSeeds + s] = bucket;
    }
  }
  std::vector<uint64_t> support(size_t{kPairs} * kPieces, 0);
  size_t cells = 0;
  for (size_t i = 0; i < (size_t{kFragmentSeeds} << bits); ++i) cells += counts[i] != 0 ? 1 : 0;
  if (read_cell_by_cell(cells, buckets)) {
    // Per seed, its pieces ordered by bucket: pieces[first[y] .. first[y + 1]).
    std::vector<uint8_t> pieces(kPieces);
    std::vector<uint32_t> first(buckets + 1);
    for (uint32_t s = 0; s < kFragmentSeeds; ++s) {
      const uint64_t* row = counts + (size_t{s} << bits);
      bool any = false;
      for (uint32_t y = 0; y < buckets; ++y) any = any || row[y] != 0;
      if (!any) continue;
      if (cancel.requested()) return {};
      const uint8_t* bucket_of = piece_bucket.data() + size_t{s} * kPieces;
      std::fill(first.begin(), first.end(), 0);
      for (uint32_t piece = 0; piece < kPieces; ++piece) ++first[bucket_of[piece] + 1];
      for (uint32_t y = 0; y < buckets; ++y) first[y + 1] += first[y];
      std::vector<uint32_t> next(first.begin(), first.end() - 1);
      for (uint32_t piece = 0; piece < kPieces; ++piece) {
        pieces[next[bucket_of[piece]]++] = static_cast<uint8_t>(piece);
      }
      for (uint32_t y = 0; y < buckets; ++y) {
        const uint64_t count = row[y];
        if (count == 0) continue;
        for (uint32_t pair = 0; pair < kPairs; ++pair) {
          if (!possible_pair(position, pair / blur::kWordAlphabet, pair % blur::kWordAlphabet)) {
            continue;
          }
          const uint32_t want = y ^ pair_bucket[size_t{pair} * kFragmentSeeds + s];
          uint64_t* sums = support.data() + size_t{pair} * kPieces;
          for (uint32_t k = first[want]; k < first[want + 1]; ++k) sums[pieces[k]] += count;
        }
      }
    }
    return support;
  }
  for (uint32_t pair = 0; pair < kPairs; ++pair) {
    if (!possible_pair(position, pair / blur::kWordAlphabet, pair % blur::kWordAlphabet)) continue;
    if (pair % 64 == 0 && cancel.requested()) return {};
    uint64_t* sums = support.data() + size_t{pair} * kPieces;
    for (uint32_t s = 0; s < kFragmentSeeds; ++s) {
      const uint64_t* row = counts + (size_t{s} << bits);
      const uint8_t* pieces = piece_bucket.data() + size_t{s} * kPieces;
      const uint8_t x = pair_bucket[size_t{pair} * kFragmentSeeds + s];
      for (uint32_t piece = 0; piece < kPieces; ++piece) sums[piece] += row[pieces[piece] ^ x];
    }
  }
  return support;
}

CountEstimate FragmentPuzzleDecoder::fragment(uint32_t position, uint32_t piece, uint32_t first,
                                              uint32_t second) const {
  const uint32_t bits = shape_.bucket_bits;
  const uint64_t* counts = tally_.data() + shape_.fragment_offset(position);
  const uint64_t value = blur::fragment_value(piece, first, second);
  uint64_t support = 0;
  for (uint32_t s = 0; s < kFragmentSeeds; ++s) {
    support += counts[(size_t{s} << bits) | blur::fragment_hash(position, s, value, bits)];
  }
  return fragment_estimate(position, support);
}

CountEstimate FragmentPuzzleDecoder::fragment_estimate(uint32_t position, uint64_t support) const {
  return scaled(position_reports_[position], support);
}

// With a the table's variance per unit of others' squares, a fragment of
// estimate c > 0 and error s is kFragmentSquaresZ errors above zero while
// the sum S it is checked against is at most t = (c^2 / z^2 - s^2) / a.
// Taken by decreasing t, the k-th fragment is kept while t_k >= C_k, the
// sum of the first k squares (its own included, a little conservative):
// t_k - C_k only decreases, so the first failure ends the set.
double FragmentPuzzleDecoder::fragment_squares(const std::vector<CountEstimate>& estimates) const {
  const double per_square =
      seed_table_variance(params_, shape_.bucket_bits, kFragmentSeeds, 1.0, 1.0);
  const double z2 = kFragmentSquaresZ * kFragmentSquaresZ;
  std::vector<std::pair<double, double>> strong;  // (t, c^2)
  for (const CountEstimate& e : estimates) {
    if (!(e.count > 0) || !std::isfinite(e.std_error)) continue;
    const double square = e.count * e.count;
    const double t = (square / z2 - e.std_error * e.std_error) / per_square;
    if (t >= 0) strong.emplace_back(t, square);
  }
  std::sort(strong.begin(), strong.end(), [](const auto& x, const auto& y) {
    return x.first > y.first || (x.first == y.first && x.second > y.second);
  });
  double sum = 0;
  for (const auto& [t, square] : strong) {
    if (sum + square > t) break;
    sum += square;
  }
  return sum;
}

CountEstimate FragmentPuzzleDecoder::with_fragment_table_variance(const CountEstimate& e,
                                                                  double position_squares) const {
  const double own = std::max(e.count, 0.0);
  return with_seed_table_variance(e, params_, shape_.bucket_bits, kFragmentSeeds,
                                  std::max(position_squares - own * own, 0.0), 1.0);
}

CountEstimate FragmentPuzzleDecoder::word(const blur::Word& word) const {
  std::vector<uint8_t> hashes(blur::kPrefixHashSeeds);
  word_table_->hash(word, hashes.data());
  return scaled(reports_, word_table_->support(word_counts(), hashes.data(), nullptr));
}

// One pooled "level" of all n reports.
CountEstimate FragmentPuzzleDecoder::with_word_table_variance(const CountEstimate& e,
                                                              double others_squared) const {
  return with_seed_table_variance(e, params_, shape_.bucket_bits, blur::kPrefixHashSeeds,
                                  others_squared, 1.0);
}

Discovery discover_words_by_fragments(const MetricConfig& metric,
                                      const std::vector<uint64_t>& tally, uint64_t reports,
                                      const DiscoveryOptions& options) {
  Discovery result;
  result.reports = reports;
  if (reports == 0 || options.top_k == 0) return result;
  const Cancellation& cancel = options.cancellation();
  auto cancelled = [&result] {
    result.cancelled = true;
    result.words.clear();
    return result;
  };
  const FragmentPuzzleDecoder decoder(metric, tally, reports);
  const uint32_t positions = decoder.positions();
  const uint32_t longest = metric.domain_size;
  const size_t beam = std::min<size_t>(options.beam != 0 ? options.beam : kDefaultBeam, kMaxBeam);
  const auto piece_table = shared_word_table(blur::kPuzzlePieceKeyLevel, blur::kMaxWordLength, 1,
                                             blur::kPuzzlePieceBits);

  // 1. fragments[position][piece]: the significant ones, strongest first.
  std::vector<std::vector<std::vector<Fragment>>> fragments(
      positions, std::vector<std::vector<Fragment>>(kPieces));
  std::atomic<bool> stopped{false};
  for_each_item(positions, [&](size_t position) {
    if (stopped) return;
    const std::vector<uint64_t> support =
        decoder.fragment_support(static_cast<uint32_t>(position), cancel);
    if (support.empty()) {
      stopped = true;
      return;
    }
    // Impossible pairs have no support: their estimates are negative, so
    // they stay out of the squares.
    std::vector<CountEstimate> estimates(support.size());
    for (size_t i = 0; i < support.size(); ++i) {
      estimates[i] = decoder.fragment_estimate(static_cast<uint32_t>(position), support[i]);
    }
    const double squares = decoder.fragment_squares(estimates);
    for (uint32_t pair = 0; pair < kPairs; ++pair) {
      const uint32_t first = pair / blur::kWordAlphabet, second = pair % blur::kWordAlphabet;
      if (!possible_pair(static_cast<uint32_t>(position), first, second)) continue;
      for (uint32_t piece = 0; piece < kPieces; ++piece) {
        const CountEstimate e = decoder.with_fragment_table_variance(
            estimates[size_t{pair} * kPieces + piece], squares);
        if (e.count >= kFragmentZ * e.std_error) {
          fragments[position][piece].push_back(Fragment{first, second, e.count});
        }
      }
    }
    for (auto& list : fragments[position]) {
      std::sort(list.begin(), list.end(), [](const Fragment& x, const Fragment& y) {
        return x.count > y.count ||
               (x.count == y.count && (x.first < y.first || (x.first == y.first && x.second < y.second)));
      });
      if (list.size() > kFragmentsPerPiece) list.resize(kFragmentsPerPiece);
    }
  });
  if (stopped || cancel.requested()) return cancelled();
  uint64_t evaluated = 0;
  for (uint32_t position = 0; position < positions; ++position) {
    evaluated += uint64_t{kPieces} * (position == 0 ? kPairs - blur::kWordAlphabet
                                                    : kPairs - (blur::kWordAlphabet - 1));
  }

  // 2. Per piece, join fragments position by position; a word ends at a
  // fragment holding the end code, or at the longest word's length. A
  // finished join is kept only if it hashes back to its piece (a join of
  // another word's fragments almost never does), and only the
  // kFinishedJoinsPerPiece strongest.
  std::vector<std::vector<JoinedWord>> joined(kPieces);
  for_each_item(kPieces, [&](size_t piece) {
    if (stopped || cancel.requested()) {
      stopped = true;
      return;
    }
    std::vector<JoinedWord> partial{JoinedWord{blur::Word{0, 0, 0}, 0}};
    std::vector<JoinedWord>& finished = joined[piece];
    auto finish = [&](const blur::Word& word, double score) {
      if (piece_of(*piece_table, word) == piece) finished.push_back(JoinedWord{word, score});
    };
    for (uint32_t position = 0; position < positions && !partial.empty(); ++position) {
      const uint32_t at = blur::kFragmentCharacters * position;
      std::vector<JoinedWord> next;
      for (const JoinedWord& c : partial) {
        for (const Fragment& f : fragments[position][piece]) {
          const double score = c.score + f.count;
          if (f.first == blur::kWordEnd) {
            finish(c.word, score);
            continue;
          }
          blur::Word word = c.word.with(at, f.first);
          word.length = at + 1;
          if (f.second == blur::kWordEnd || at + 1 == longest) {
            if (f.second == blur::kWordEnd) finish(word, score);
            continue;  // past the longest word: only the end code is possible
          }
          word = word.with(at + 1, f.second);
          word.length = at + 2;
          if (at + 2 == longest) {
            finish(word, score);
          } else {
            next.push_back(JoinedWord{word, score});
          }
        }
      }
      keep_strongest(&next, beam);
      keep_strongest(&finished, kFinishedJoinsPerPiece);
      partial = std::move(next);
    }
  });
  if (stopped) return cancelled();
  std::vector<blur::Word> candidates;  // at most 256 x kFinishedJoinsPerPiece
  for (const auto& list : joined) {
    for (const JoinedWord& c : list) candidates.push_back(c.word);
  }

  // 3. Rank by the word sketch.
  std::vector<DiscoveredWord> found(candidates.size());
  for_each_item(candidates.size(), [&](size_t i) {
    if (stopped || (i % 64 == 0 && cancel.requested())) {
      stopped = true;
      return;
    }
    found[i] = DiscoveredWord{spell(candidates[i]), decoder.word(candidates[i])};
  });
  if (stopped) return cancelled();
  evaluated += candidates.size();
  std::sort(found.begin(), found.end(), [](const DiscoveredWord& x, const DiscoveredWord& y) {
    return x.estimate.count > y.estimate.count ||
           (x.estimate.count == y.estimate.count && x.word < y.word);
  });
  double all_squared = 0;
  for (const DiscoveredWord& w : found) {
    const double c = std::max(w.estimate.count, 0.0);
    all_squared += c * c;
  }
  answer_significant(
      found.size(), all_squared, options, [&](size_t i) { return found[i].estimate.count; },
      [&](size_t i, double others_squared) {
        return decoder.with_word_table_variance(found[i].estimate, others_squared);
      },
      [&](size_t i) { return found[i].word; }, &result.words);
  result.candidates_evaluated =
      static_cast<uint32_t>(std::min<uint64_t>(evaluated, std::numeric_limits<uint32_t>::max()));
  return result;
}

}  // namespace blur::collector
