// Flash cost of one mechanism on Cortex-M4: the same program (board port,
// DRBG, one randomization) built once per mechanism and once with none;
// the size report prints the differences.
#include <stdio.h>
#include <stdlib.h>

#include "blur/discovery/fragment_puzzle.h"
#include "blur/discovery/prefix_extension.h"
#include "blur/mechanisms/binary_randomized_response.h"
#include "blur/mechanisms/discrete_laplace.h"
#include "blur/mechanisms/generalized_randomized_response.h"
#include "blur/mechanisms/hadamard_response.h"
#include "blur/mechanisms/local_hashing.h"
#include "blur/mechanisms/loloha.h"
#include "blur/mechanisms/one_bit_mean.h"
#include "blur/mechanisms/rappor.h"
#include "blur/sampling/rng.h"
#include "blur/mechanisms/unary_encoding.h"
#include "board_port.h"

namespace {
uint8_t g_flash[2 * 256];
blur::cortex_m::BoardContext g_board;
blur::Rng g_rng;
}  // namespace

int main() {
  const blur::Port port = blur::cortex_m::board_port(&g_board, g_flash, 256, 2);
  if (g_rng.seed(port, nullptr, 0) != blur::Status::kOk) exit(1);
  uint32_t out = 0;
  blur::Status status = blur::Status::kOk;
#if BLUR_COST_MECHANISM == 1
  status = blur::BinaryRandomizedResponse::create(1000000).value().randomize(g_rng, 1, &out);
#elif BLUR_COST_MECHANISM == 2
  status =
      blur::GeneralizedRandomizedResponse::create(1000000, 16).value().randomize(g_rng, 3, &out);
#elif BLUR_COST_MECHANISM == 3 || BLUR_COST_MECHANISM == 4
  const auto kind = BLUR_COST_MECHANISM == 3 ? blur::UnaryEncoding::Kind::kSymmetric
                                             : blur::UnaryEncoding::Kind::kOptimized;
  static uint8_t bits[8];
  status = blur::UnaryEncoding::create(kind, 1000000, 64).value().randomize(g_rng, 3, bits);
  out = bits[0];
#elif BLUR_COST_MECHANISM == 5
  int64_t number = 0;
  status = blur::DiscreteLaplace::create(1000000, 101).value().randomize(g_rng, 3, &number);
  out = static_cast<uint32_t>(number);
#elif BLUR_COST_MECHANISM == 7
  status = blur::HadamardResponse::create(1000000, 100).value().randomize(g_rng, 3, &out);
#elif BLUR_COST_MECHANISM == 8 || BLUR_COST_MECHANISM == 9
  uint32_t seed = 0;
  status = blur::LocalHashing::create(BLUR_COST_MECHANISM == 8 ? blur::LocalHashing::Kind::kOptimized
                                                               : blur::LocalHashing::Kind::kBinary,
                                      1000000, 4096)
               .value()
               .randomize(g_rng, 3, &seed, &out);
  out ^= seed;
#elif BLUR_COST_MECHANISM == 10
  static uint8_t bits[32];
  status = blur::Rappor::create(1000000, 100, blur::RapporShape{}, blur::BloomHashKey{1, 0})
               .value()
               .randomize(g_rng, 3, &out, bits);
  out ^= bits[0];
#elif BLUR_COST_MECHANISM == 11
  // Word discovery: the word is packed, one prefix hashed, the bucket sent
  // through g-ary randomized response.
  static const char kWord[] = "keyboard";
  uint32_t seed = 0;
  const blur::Word word = blur::Word::parse(kWord, sizeof kWord - 1).value();
  status = blur::PrefixExtension::create(4000000, 16).value().randomize(g_rng, word, &seed, &out);
  out ^= seed;
#elif BLUR_COST_MECHANISM == 12
  // Word discovery by fragments: the word and one fragment hashed, each
  // through g-ary randomized response at eps / 2.
  static const char kWord[] = "keyboard";
  uint32_t seed = 0;
  const blur::Word word = blur::Word::parse(kWord, sizeof kWord - 1).value();
  status = blur::SequenceFragmentPuzzle::create(4000000, 16).value().randomize(g_rng, word, &seed,
                                                                               &out);
  out ^= seed;
#elif BLUR_COST_MECHANISM == 6
  status = blur::OneBitMean::create(1000000, 101).value().randomize(g_rng, 3, &out);
#elif BLUR_COST_MECHANISM == 13
  // Longitudinal local hashing: the device's hash seed and the bucket's
  // permanent response from HMAC streams of the secret, then one g-ary
  // randomized response.
  static const uint8_t kSecret[32] = {1, 2, 3};
  static blur::ReportPayload payload;
  status = blur::Loloha::create(500000, 2000000, 4096, blur::MemoKey{1, 2})
               .value()
               .randomize(g_rng, kSecret, 3, &payload);
  out = payload.value ^ payload.seed;
#elif BLUR_COST_MECHANISM != 0
#error "BLUR_COST_MECHANISM names no mechanism of the table: add its case"
#endif
  printf("%u\n", static_cast<unsigned>(out));
  exit(status == blur::Status::kOk ? 0 : 1);
}
