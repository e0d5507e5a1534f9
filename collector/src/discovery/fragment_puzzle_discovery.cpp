#include "discovery/fragment_puzzle_discovery.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <thread>

#include "blur/discovery/fragment_puzzle.h"

namespace blur::collector {

namespace {

using blur::SequenceFragmentPuzzle;

constexpr uint32_t kFragmentSeeds = blur::kFragmentHashSeeds;
constexpr uint32_t kPieces = blur::kPuzzlePieces;
constexpr uint32_t kPairs = blur::kWordAlphabet * blur::kWordAlphabet;
// A fragment joins candidates when its estimate is this many standard
// errors above zero: low, because a candidate must also hash to its piece
// (1 in 256 chance for a join of noise) and then pass the word sketch.
constexpr double kFragmentZ = 2.0;
// The strongest significant fragments kept per (position, piece): about 17
// of the 757 pairs of noise pass kFragmentZ by chance.
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

struct Candidate {
  blur::Word word;
  double score;  // the sum of the joined fragments' estimates
};

bool stronger(const Candidate& x, const Candidate& y) {
  return x.score > y.score ||
         (x.score == y.score &&
          (x.word.low < y.word.low || (x.word.low == y.word.low && x.word.high < y.word.high)));
}

void keep_strongest(std::vector<Candidate>* candidates, size_t width) {
  if (candidates->size() <= width) return;
  std::nth_element(candidates->begin(), candidates->begin() + static_cast<std::ptrdiff_t>(width),
                   candidates->end(), stronger);
  candidates->resize(width);
}

template <typename Work>
void run_threads(size_t items, Work work) {
  const unsigned threads = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  auto run = [&](unsigned t) {
    for (size_t i = t; i < items; i += threads) work(i);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(run, t);
  run(0);
  for (auto& thread : pool) thread.join();
}

}  // namespace

size_t FragmentPuzzleShape::word_cells() const {
  return size_t{blur::kPrefixHashSeeds} << bucket_bits;
}
size_t FragmentPuzzleShape::fragment_offset(uint32_t position) const {
  return word_cells() + (size_t{position} * kFragmentSeeds << bucket_bits);
}
size_t FragmentPuzzleShape::cells() const { return fragment_offset(positions); }

FragmentPuzzleShape fragment_puzzle_shape(const MetricConfig& metric) {
  return FragmentPuzzleShape{SequenceFragmentPuzzle::positions(metric.domain_size),
                             SequenceFragmentPuzzle::bucket_bits(metric.epsilon_micros)};
}

OracleParams fragment_puzzle_params(const MetricConfig& metric) {
  const double g = std::ldexp(1.0, static_cast<int>(fragment_puzzle_shape(metric).bucket_bits));
  const double half = metric.epsilon_micros / 2e6;
  const double p = 1.0 / (1.0 + (g - 1) * std::exp(-half));  // the stable form
  return OracleParams{p, 1.0 / g};
}

FragmentPuzzleDecoder::FragmentPuzzleDecoder(const MetricConfig& metric,
                                             const std::vector<uint64_t>& tally, uint64_t reports)
    : tally_(tally),
      reports_(reports),
      shape_(fragment_puzzle_shape(metric)),
      params_(fragment_puzzle_params(metric)),
      word_table_(SequenceFragmentPuzzle::kWordKeyLevel, metric.domain_size, blur::kPrefixHashSeeds,
                  shape_.bucket_bits),
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
std::vector<uint64_t> FragmentPuzzleDecoder::fragment_support(uint32_t position) const {
  const uint32_t bits = shape_.bucket_bits, shift = 64 - bits;
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
  for (uint32_t pair = 0; pair < kPairs; ++pair) {
    if (!possible_pair(position, pair / blur::kWordAlphabet, pair % blur::kWordAlphabet)) continue;
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
  return scaled(position_reports_[position], support);
}

CountEstimate FragmentPuzzleDecoder::word(const blur::Word& word) const {
  std::vector<uint8_t> hashes(blur::kPrefixHashSeeds);
  word_table_.hash(word, hashes.data());
  return scaled(reports_, word_table_.support(word_counts(), hashes.data(), nullptr));
}

// One pooled "level" of all n reports.
CountEstimate FragmentPuzzleDecoder::with_table_variance(const CountEstimate& e,
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
  const FragmentPuzzleDecoder decoder(metric, tally, reports);
  const uint32_t positions = decoder.positions();
  const uint32_t longest = metric.domain_size;
  const size_t beam = options.beam != 0 ? options.beam : kDefaultBeam;

  // 1. fragments[position][piece]: the significant ones, strongest first.
  std::vector<std::vector<std::vector<Fragment>>> fragments(
      positions, std::vector<std::vector<Fragment>>(kPieces));
  run_threads(positions, [&](size_t position) {
    const uint64_t n = decoder.position_reports(static_cast<uint32_t>(position));
    const std::vector<uint64_t> support = decoder.fragment_support(static_cast<uint32_t>(position));
    for (uint32_t pair = 0; pair < kPairs; ++pair) {
      const uint32_t first = pair / blur::kWordAlphabet, second = pair % blur::kWordAlphabet;
      if (!possible_pair(static_cast<uint32_t>(position), first, second)) continue;
      for (uint32_t piece = 0; piece < kPieces; ++piece) {
        const CountEstimate e = decoder.scaled(n, support[size_t{pair} * kPieces + piece]);
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
  uint64_t evaluated = 0;
  for (uint32_t position = 0; position < positions; ++position) {
    evaluated += uint64_t{kPieces} * (position == 0 ? kPairs - blur::kWordAlphabet
                                                    : kPairs - (blur::kWordAlphabet - 1));
  }

  // 2. Per piece, join fragments position by position; a word ends at a
  // fragment holding the end code, or at the longest word's length.
  std::vector<std::vector<Candidate>> joined(kPieces);
  run_threads(kPieces, [&](size_t piece) {
    std::vector<Candidate> partial{Candidate{blur::Word{0, 0, 0}, 0}};
    std::vector<Candidate>& finished = joined[piece];
    for (uint32_t position = 0; position < positions && !partial.empty(); ++position) {
      const uint32_t at = blur::kFragmentCharacters * position;
      std::vector<Candidate> next;
      for (const Candidate& c : partial) {
        for (const Fragment& f : fragments[position][piece]) {
          const double score = c.score + f.count;
          if (f.first == blur::kWordEnd) {
            finished.push_back(Candidate{c.word, score});
            continue;
          }
          blur::Word word = c.word.with(at, f.first);
          word.length = at + 1;
          if (f.second == blur::kWordEnd || at + 1 == longest) {
            if (f.second == blur::kWordEnd) finished.push_back(Candidate{word, score});
            continue;  // past the longest word: only the end code is possible
          }
          word = word.with(at + 1, f.second);
          word.length = at + 2;
          (at + 2 == longest ? finished : next).push_back(Candidate{word, score});
        }
      }
      keep_strongest(&next, beam);
      partial = std::move(next);
    }
    // The piece is a function of the word: a join of another word's
    // fragments almost never hashes back to its own piece.
    finished.erase(std::remove_if(finished.begin(), finished.end(),
                                  [&](const Candidate& c) {
                                    return blur::puzzle_piece(c.word) != piece;
                                  }),
                   finished.end());
  });
  std::vector<blur::Word> candidates;
  for (const auto& list : joined) {
    for (const Candidate& c : list) candidates.push_back(c.word);
  }

  // 3. Rank by the word sketch.
  std::vector<DiscoveredWord> found(candidates.size());
  run_threads(candidates.size(), [&](size_t i) {
    found[i] = DiscoveredWord{spell(candidates[i]), decoder.word(candidates[i])};
  });
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
  for (DiscoveredWord& w : found) {
    if (result.words.size() == options.top_k) break;
    const double c = std::max(w.estimate.count, 0.0);
    w.estimate = decoder.with_table_variance(w.estimate, all_squared - c * c);
    if (w.estimate.count >= options.min_z * w.estimate.std_error) result.words.push_back(w);
  }
  result.candidates_evaluated =
      static_cast<uint32_t>(std::min<uint64_t>(evaluated, std::numeric_limits<uint32_t>::max()));
  return result;
}

}  // namespace blur::collector
