#include <gtest/gtest.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blur/compat/std_facilities.h"

#include "blur/discovery/fragment_puzzle.h"
#include "blur/discovery/prefix_extension.h"
#include "blur/mechanisms/any_mechanism.h"  // OneShotMechanism, the table
#include "blur/mechanisms/binary_randomized_response.h"
#include "blur/mechanisms/discrete_laplace.h"
#include "blur/mechanisms/generalized_randomized_response.h"
#include "blur/mechanisms/hadamard_response.h"
#include "blur/mechanisms/local_hashing.h"
#include "blur/mechanisms/one_bit_mean.h"
#include "blur/mechanisms/rappor.h"
#include "blur/sampling/rng.h"
#include "blur/mechanisms/unary_encoding.h"
#include "kat_randomizer_outputs.inc"  // kKatRandomizerOutputs
#include "sim_port.h"

namespace {

using blur::PayloadKind;
using blur::Status;

constexpr char kPersonalization[] = "blur-device-sim/randomize";
constexpr uint32_t kRapporMetricId = 1;  // blur-device-sim's default metric, hash key 0

constexpr uint32_t kPemMechanism = 11;  // word discovery: the input is a word
constexpr uint32_t kSfpMechanism = 12;
bool word_mechanism(uint32_t mechanism) {
  return mechanism == kPemMechanism || mechanism == kSfpMechanism;
}

struct Vector {
  uint32_t mechanism, epsilon_micros, domain, input, count;
  uint64_t seed;
  char word[blur::kMaxWordLength + 1];  // pem's and sfp's input
  const char* outputs;  // the rest of the line
  size_t outputs_length;
};

bool parse(const char* line, size_t length, Vector* v) {
  if (length == 0 || line[0] == '#') return false;
  char header[128];
  size_t header_length = 0;
  for (int fields = 0; header_length < length && header_length < sizeof header - 1;
       ++header_length) {
    if (line[header_length] == ' ' && ++fields == 6) break;
  }
  memcpy(header, line, header_length);
  header[header_length] = '\0';
  char* end = header;
  v->mechanism = static_cast<uint32_t>(strtoul(end, &end, 10));
  v->epsilon_micros = static_cast<uint32_t>(strtoul(end, &end, 10));
  v->domain = static_cast<uint32_t>(strtoul(end, &end, 10));
  v->seed = strtoull(end, &end, 10);
  v->word[0] = '\0';
  v->input = 0;
  if (word_mechanism(v->mechanism)) {
    while (*end == ' ') ++end;
    size_t n = 0;
    while (end[n] != ' ' && end[n] != '\0' && n < blur::kMaxWordLength) ++n;
    memcpy(v->word, end, n);
    v->word[n] = '\0';
    end += n;
  } else {
    v->input = static_cast<uint32_t>(strtoul(end, &end, 10));
  }
  v->count = static_cast<uint32_t>(strtoul(end, &end, 10));
  if (header_length >= length) return false;
  v->outputs = line + header_length + 1;
  v->outputs_length = length - header_length - 1;
  return true;
}

// Appends one output token: decimal for scalars and numbers, "a:b:bucket"
// for local hashing, lower-case hex of the bytes for bit vectors, and
// "cohort:hex" for Bloom filters.
class Tokens {
 public:
  void number(long long value) { append("%lld", value); }
  void hashed(uint32_t seed, uint32_t bucket) {
    append("%u:%u:%u", static_cast<unsigned>(seed >> 16), static_cast<unsigned>(seed & 0xFFFFu),
           static_cast<unsigned>(bucket));  // uint32_t is unsigned long on some targets
  }
  void bytes(const uint8_t* data, size_t length, long long cohort) {
    if (cohort >= 0) append("%lld:", cohort);
    for (size_t i = 0; i < length; ++i) {
      snprintf(text_ + used_, sizeof text_ - used_, "%02x", data[i]);
      used_ += 2;
    }
  }
  void separator() { append(","); }
  const char* text() const { return text_; }
  size_t length() const { return used_; }

 private:
  // printf's format, checked against the arguments by the compiler.
  __attribute__((format(printf, 2, 3))) void append(const char* format, ...) {
    va_list args;
    va_start(args, format);
    const int n = vsnprintf(text_ + used_, sizeof text_ - used_, format, args);
    va_end(args);
    if (n > 0) used_ += static_cast<size_t>(n);
  }
  char text_[8192];
  size_t used_ = 0;
};

template <typename Mechanism>
void check(const Mechanism& mechanism, const Vector& v) {
  blur::sim::SimPort port(v.seed);
  blur::Rng rng;
  ASSERT_EQ(rng.seed(port.port(), reinterpret_cast<const uint8_t*>(kPersonalization),
                     sizeof kPersonalization - 1),
            Status::kOk);
  static Tokens tokens;
  tokens = Tokens();
  for (uint32_t i = 0; i < v.count; ++i) {
    if (i > 0) tokens.separator();
    constexpr PayloadKind kind = Mechanism::kPayload;
    if constexpr (kind == PayloadKind::kNumber) {
      int64_t out = 0;
      ASSERT_EQ(mechanism.randomize(rng, v.input, &out), Status::kOk);
      tokens.number(out);
    } else if constexpr (kind == PayloadKind::kLocalHash &&
                         std::is_same_v<blur::MechanismValueT<Mechanism>, blur::Word>) {
      const auto word = blur::Word::parse(v.word, strlen(v.word));
      ASSERT_TRUE(word.ok()) << v.word;
      uint32_t seed = 0, bucket = 0;
      ASSERT_EQ(mechanism.randomize(rng, word.value(), &seed, &bucket), Status::kOk);
      tokens.hashed(seed, bucket);
    } else if constexpr (kind == PayloadKind::kLocalHash) {
      uint32_t seed = 0, bucket = 0;
      ASSERT_EQ(mechanism.randomize(rng, v.input, &seed, &bucket), Status::kOk);
      tokens.hashed(seed, bucket);
    } else if constexpr (kind == PayloadKind::kBits) {
      uint8_t bits[64];
      ASSERT_LE(mechanism.payload_bytes(), sizeof bits);
      ASSERT_EQ(mechanism.randomize(rng, v.input, bits), Status::kOk);
      tokens.bytes(bits, mechanism.payload_bytes(), -1);
    } else if constexpr (kind == PayloadKind::kBloom) {
      uint8_t bits[blur::kMaxBitVectorBytes];
      uint32_t cohort = 0;
      ASSERT_EQ(mechanism.randomize(rng, v.input, &cohort, bits), Status::kOk);
      tokens.bytes(bits, mechanism.payload_bytes(), cohort);
    } else {
      uint32_t out = 0;
      ASSERT_EQ(mechanism.randomize(rng, v.input, &out), Status::kOk);
      tokens.number(out);
    }
  }
  const bool same = tokens.length() == v.outputs_length &&
                    memcmp(tokens.text(), v.outputs, v.outputs_length) == 0;
  EXPECT_TRUE(same) << "mechanism " << v.mechanism << " seed " << v.seed;
  if (!same) {  // what this platform produced, in the file's format
    char input[24];
    if (word_mechanism(v.mechanism)) {
      snprintf(input, sizeof input, "%s", v.word);
    } else {
      snprintf(input, sizeof input, "%lu", static_cast<unsigned long>(v.input));
    }
    printf("actual: %lu %lu %lu %llu %s %lu %s\n", static_cast<unsigned long>(v.mechanism),
           static_cast<unsigned long>(v.epsilon_micros), static_cast<unsigned long>(v.domain),
           static_cast<unsigned long long>(v.seed), input, static_cast<unsigned long>(v.count),
           tokens.text());
  }
}

template <typename Built>
void check_built(const Built& built, const Vector& v) {
  ASSERT_TRUE(built.ok()) << "mechanism " << v.mechanism;
  check(built.value(), v);
}

// Every platform reproduces the recorded outputs exactly.
TEST(RandomizerKnownAnswers, OutputsAgreeBitForBit) {
  static Vector v;
  size_t vectors = 0;
  bool seen[blur::kMechanismCount + 1] = {};
  for (const char* text = kKatRandomizerOutputs; *text != '\0';) {
    const char* end = strchr(text, '\n');
    const size_t length = end ? static_cast<size_t>(end - text) : strlen(text);
    if (parse(text, length, &v)) {
      ++vectors;
      const uint32_t e = v.epsilon_micros, d = v.domain;
      using UE = blur::UnaryEncoding;
      using LH = blur::LocalHashing;
      switch (v.mechanism) {
        case 1:
          check_built(blur::BinaryRandomizedResponse::create(e), v);
          break;
        case 2:
          check_built(blur::GeneralizedRandomizedResponse::create(e, d), v);
          break;
        case 3:
          check_built(UE::create(UE::Kind::kSymmetric, e, d), v);
          break;
        case 4:
          check_built(UE::create(UE::Kind::kOptimized, e, d), v);
          break;
        case 5:
          check_built(blur::DiscreteLaplace::create(e, d), v);
          break;
        case 6:
          check_built(blur::OneBitMean::create(e, d), v);
          break;
        case 7:
          check_built(blur::HadamardResponse::create(e, d), v);
          break;
        case 8:
          check_built(LH::create(LH::Kind::kOptimized, e, d), v);
          break;
        case 9:
          check_built(LH::create(LH::Kind::kBinary, e, d), v);
          break;
        case 10:
          check_built(blur::Rappor::create(e, d, blur::RapporShape{},
                                           blur::BloomHashKey{kRapporMetricId, 0}),
                      v);
          break;
        case kPemMechanism:
          check_built(blur::PrefixExtension::create(e, d), v);
          break;
        case kSfpMechanism:
          check_built(blur::SequenceFragmentPuzzle::create(e, d), v);
          break;
        default:
          EXPECT_TRUE(false) << "unknown mechanism " << v.mechanism;
      }
      if (v.mechanism <= blur::kMechanismCount) seen[v.mechanism] = true;
    }
    text += length + (end ? 1 : 0);
  }
  // Every one-shot line of the mechanism table has a vector, so a mechanism
  // added to the table without one (or without a case above) fails here.
  // Memoized-only mechanisms (loloha) are covered by their own tests.
  size_t one_shot = 0;
#define BLUR_X(number, Cpp, name, C, PROTO, Payload, max_domain)                        \
  if (!std::is_void_v<blur::OneShotMechanism<blur::MechanismId::k##Cpp>>) {           \
    ++one_shot;                                                                       \
    EXPECT_TRUE(seen[number]) << "no known-answer vector for mechanism " << (number) \
                              << " (" #name ")";                                      \
  }
  BLUR_MECHANISM_TABLE(BLUR_X)
#undef BLUR_X
  EXPECT_GE(vectors, one_shot);
}

}  // namespace
