// Flash cost of one mechanism on Cortex-M4: the same program (board port,
// DRBG, one randomization) built once per mechanism of the table and once
// with none; the size report prints the differences. The mechanism is built
// by its own builder (mechanism_builder.h) and randomized into a report
// payload as the Client does, so every table line is measured without a
// case here: an id without a builder fails to compile.
#include <stdio.h>
#include <stdlib.h>

#include "blur/compat/std_facilities.h"

#include "blur/mechanisms/any_mechanism.h"
#include "blur/report/report.h"
#include "blur/sampling/rng.h"
#include "board_port.h"

namespace {
uint8_t g_flash[2 * 256];
blur::bare_metal::BoardContext g_board;
blur::Rng g_rng;
blur::ReportPayload g_payload;

#if BLUR_COST_MECHANISM != 0
static_assert(blur::is_mechanism(BLUR_COST_MECHANISM),
              "BLUR_COST_MECHANISM names no mechanism of the table");
// A representative metric: epsilon 1 nat (a memoized-only mechanism: 2 nats
// for the permanent response), the largest domain up to 100 (2 for rr, the
// longest word for word discovery), value 1 or the word "keyboard".
template <blur::MechanismId kId>
blur::Status randomize_once() {
  using blur::MechanismId;
  constexpr uint32_t kMax = blur::mechanism_max_domain(kId);
  blur::MechanismConfig config{kId, 1000000, kMax < 100 ? kMax : 100, 1};
  using Builder = blur::MechanismBuilder<kId>;
  using OneShot = blur::OneShotMechanism<kId>;
  if constexpr (std::is_void_v<OneShot>) {
    static const uint8_t kSecret[blur::kDeviceSecretSize] = {1, 2, 3};
    config.longitudinal_epsilon = 2000000;
    const auto built = Builder::create_memoized(config, blur::MemoKey{1, 2});
    if (!built.ok()) return built.status();
    return built.value().randomize(g_rng, kSecret, 1, &g_payload);
  } else {
    const auto built = Builder::create(config);
    if (!built.ok()) return built.status();
    if constexpr (std::is_same_v<blur::MechanismValueT<OneShot>, blur::Word>) {
      static const char kWord[] = "keyboard";
      const blur::Word word = blur::Word::parse(kWord, sizeof kWord - 1).value();
      return blur::randomize_payload(built.value(), g_rng, word, &g_payload);
    } else {
      return blur::randomize_payload(built.value(), g_rng, 1u, &g_payload);
    }
  }
}
#endif
}  // namespace

int main() {
  const blur::Port port = blur::bare_metal::board_port(&g_board, g_flash, 256, 2);
  if (g_rng.seed(port, nullptr, 0) != blur::Status::kOk) exit(1);
  blur::Status status = blur::Status::kOk;
#if BLUR_COST_MECHANISM != 0
  status = randomize_once<static_cast<blur::MechanismId>(BLUR_COST_MECHANISM)>();
#endif
  const uint32_t out = g_payload.value ^ g_payload.seed ^ g_payload.bits[0] ^
                       static_cast<uint32_t>(g_payload.number);
  printf("%u\n", static_cast<unsigned>(out));
  exit(status == blur::Status::kOk ? 0 : 1);
}
