#include "mechanisms/fragment_puzzle.h"

#include <cmath>

#include "blur/discovery/fragment_puzzle.h"
#include "mechanisms/mechanism_spec.h"

namespace blur::collector {

blur::FragmentPuzzleFields fragment_puzzle_fields(const IncomingReport& report) {
  return blur::FragmentPuzzleFields::from_local_hash(report.hash_a, report.hash_b, report.value);
}

size_t FragmentPuzzleShape::word_cells() const {
  return size_t{blur::kPrefixHashSeeds} << bucket_bits;
}
size_t FragmentPuzzleShape::fragment_offset(uint32_t position) const {
  return word_cells() + (size_t{position} * blur::kFragmentHashSeeds << bucket_bits);
}
size_t FragmentPuzzleShape::cells() const { return fragment_offset(positions); }

FragmentPuzzleShape fragment_puzzle_shape(const MetricConfig& metric) {
  return FragmentPuzzleShape{blur::SequenceFragmentPuzzle::positions(metric.domain_size),
                             blur::SequenceFragmentPuzzle::bucket_bits(metric.epsilon_micros)};
}

OracleParams fragment_puzzle_params(const MetricConfig& metric) {
  const double g = std::ldexp(1.0, static_cast<int>(fragment_puzzle_shape(metric).bucket_bits));
  const double half = metric.epsilon_micros / 2e6;
  const double p = 1.0 / (1.0 + (g - 1) * std::exp(-half));  // the stable form
  return OracleParams{p, 1.0 / g};
}

namespace {

// Each field within the family: a position of the word, a seed of the
// table, a bucket of g bits (the fragment seed is masked out of a, so any
// value is one).
std::string fragment_puzzle_error(const MetricConfig& metric, const IncomingReport& r) {
  const FragmentPuzzleShape shape = fragment_puzzle_shape(metric);
  const blur::FragmentPuzzleFields f = fragment_puzzle_fields(r);
  if (f.position >= shape.positions || f.word_seed >= blur::kPrefixHashSeeds ||
      f.word_bucket >> shape.bucket_bits != 0 || f.fragment_bucket >> shape.bucket_bits != 0) {
    return "fragment position, hash seed or bucket outside the family of " + describe(metric);
  }
  return {};
}

size_t fragment_puzzle_tally_size(const MetricConfig& metric) {
  return fragment_puzzle_shape(metric).cells();
}

// The word sketch's cell and the fragment sketch's; the validator bounds
// each field.
void tally_fragment_puzzle(const MetricConfig& metric, const IncomingReport& report,
                           uint64_t multiplicity, uint64_t* tally) {
  const FragmentPuzzleShape shape = fragment_puzzle_shape(metric);
  const blur::FragmentPuzzleFields f = fragment_puzzle_fields(report);
  tally[(size_t{f.word_seed} << shape.bucket_bits) | f.word_bucket] += multiplicity;
  tally[shape.fragment_offset(f.position) +
        ((size_t{f.fragment_seed} << shape.bucket_bits) | f.fragment_bucket)] += multiplicity;
}

}  // namespace

template <>
MechanismSpec make_spec<MechanismId::kSequenceFragmentPuzzle>() {
  MechanismSpec spec;
  spec.id = MechanismId::kSequenceFragmentPuzzle;
  spec.max_domain = mechanism_max_domain(MechanismId::kSequenceFragmentPuzzle);
  spec.payload_error = fragment_puzzle_error;
  spec.tally_size = fragment_puzzle_tally_size;
  spec.tally = tally_fragment_puzzle;
  spec.params = fragment_puzzle_params;
  spec.discovers_words = true;
  spec.joins_fragments = true;
  return spec;
}

}  // namespace blur::collector
