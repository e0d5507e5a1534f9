// Exhaustive power cuts (the littlefs emubd idea): a scenario of many
// charges over several budget windows runs once per k, with power cut at
// the k-th flash program or erase (that operation torn: a prefix written,
// a byte half-programmed, or a block half-erased), then rebooted and
// continued to the end. For every k:
//   - after every reboot the ledger opens (never corrupt, never blank);
//   - the spent total never decreases across reboots and covers every
//     released report (no report without its charge persisted);
//   - the lifetime, window and metric caps hold over released reports;
//   - report ids are unique.
#include <gtest/gtest.h>
#include <stdio.h>

#include <new>

#include "blur/ledger.h"
#include "sim_port.h"

namespace {

using blur::Ledger;
using blur::Status;
using blur::sim::SimPort;

constexpr uint64_t kNat = blur::kEpsilonMicrosPerNat;
constexpr uint64_t kDay = 86400;
#if defined(BLUR_TEST_SMALL_SCENARIOS)
constexpr uint32_t kSteps = 24;  // QEMU: the same scenario, shorter
#else
constexpr uint32_t kSteps = 120;
#endif

struct Step {
  uint64_t advance_seconds;
  uint32_t metric;
  uint32_t epsilon;
};

Step step(uint32_t i) {
  return Step{i % 4 == 3 ? kDay / 2 : 600, 1 + i % 3, (1 + i % 4) * 150000u};
}

blur::LedgerPolicy policy() {
  blur::LedgerPolicy p;
  p.lifetime_cap_micros = 15 * kNat;
  p.window_seconds = kDay;
  p.window_allowance_micros = 3 * kNat / 2;
  p.metric_caps[0] = {1, kNat};
  p.metric_caps[1] = {2, 2 * kNat};
  p.metric_cap_count = 2;
  return p;
}

struct Released {
  uint64_t id;
  uint32_t metric;
  uint32_t epsilon;
  uint64_t window_start;
};

struct ScenarioRun {
  Released released[kSteps];
  uint32_t released_count = 0;
  uint32_t reboots = 0;
  uint64_t flash_operations = 0;
};

// Runs the scenario with power cut before flash operation `cut` (kNever: no
// cut). Returns false (after recording a test failure) on a broken invariant.
bool run(uint64_t cut, ScenarioRun* out) {
  static SimPort* port = nullptr;
  static uint8_t storage[sizeof(SimPort)];
  port = new (storage) SimPort(7);
  port->cut_power_after(cut, cut + 1);
  bool provisioned = false;
  bool advanced = false;  // the current step's clock advance was applied
  uint64_t durable_spent = 0;
  uint32_t next = 0;
  while (next < kSteps) {
    Ledger ledger;
    const Status opened = ledger.open(port->port());
    if (!provisioned) {
      // Only a first provisioning cut short may leave blank or torn slots.
      if (opened != Status::kOk) {
        EXPECT_TRUE(opened == Status::kNotProvisioned || opened == Status::kStorageCorrupt);
        if (ledger.provision(port->port(), policy(), 42) != Status::kOk) {
          port->restore_power();
          ++out->reboots;
          continue;
        }
      }
      provisioned = true;
    } else {
      EXPECT_EQ(opened, Status::kOk) << "cut " << cut;
      if (opened != Status::kOk) return false;
      EXPECT_GE(ledger.spent_micros(), durable_spent) << "cut " << cut;
    }
    bool power_lost = false;
    while (next < kSteps && !power_lost) {
      const Step s = step(next);
      if (!advanced) port->advance_time(s.advance_seconds);
      advanced = true;
      uint64_t id = 0;
      const Status charged = ledger.charge(s.epsilon, s.metric, &id);
      if (charged == Status::kOk) {
        for (uint32_t i = 0; i < out->released_count; ++i) {
          EXPECT_NE(out->released[i].id, id) << "cut " << cut;
        }
        out->released[out->released_count++] =
            Released{id, s.metric, s.epsilon, ledger.window_start()};
        durable_spent = ledger.spent_micros();
      } else if (charged == Status::kStorageFailure) {
        power_lost = true;  // retry this step after the reboot
        continue;
      } else {
        EXPECT_TRUE(charged == Status::kBudgetExhausted ||
                    charged == Status::kWindowBudgetExhausted ||
                    charged == Status::kMetricBudgetExhausted)
            << "cut " << cut;
      }
      ++next;
      advanced = false;
    }
    if (power_lost) {
      port->restore_power();
      ++out->reboots;
    }
  }
  // The caps over what was released.
  Ledger final_ledger;
  EXPECT_EQ(final_ledger.open(port->port()), Status::kOk);
  uint64_t total = 0, metric_total[3] = {};
  for (uint32_t i = 0; i < out->released_count; ++i) {
    const Released& r = out->released[i];
    total += r.epsilon;
    metric_total[r.metric - 1] += r.epsilon;
    uint64_t window_total = 0;
    for (uint32_t j = 0; j < out->released_count; ++j) {
      if (out->released[j].window_start == r.window_start) window_total += out->released[j].epsilon;
    }
    EXPECT_LE(window_total, policy().window_allowance_micros) << "cut " << cut;
  }
  EXPECT_LE(total, policy().lifetime_cap_micros) << "cut " << cut;
  EXPECT_GE(final_ledger.spent_micros(), total) << "cut " << cut;
  EXPECT_LE(metric_total[0], kNat);
  EXPECT_LE(metric_total[1], 2 * kNat);
  out->flash_operations = port->flash_operations();
  return true;
}

TEST(PowerCut, LedgerSurvivesACutAtEveryFlashOperation) {
  static ScenarioRun uncut;
  ASSERT_TRUE(run(SimPort::kNever, &uncut));
  ASSERT_EQ(uncut.reboots, 0u);
  // The scenario exercises every cap (some steps are refused).
  EXPECT_LT(uncut.released_count, kSteps);
  EXPECT_GT(uncut.released_count, kSteps / 4);
  for (uint64_t cut = 0; cut <= uncut.flash_operations; ++cut) {
    static ScenarioRun r;
    r = ScenarioRun();
    ASSERT_TRUE(run(cut, &r));
    EXPECT_EQ(r.reboots, cut < uncut.flash_operations ? 1u : 0u) << "cut " << cut;
  }
  printf(
      "%lu steps, %lu charges released; power cut at each of %llu flash operations: "
      "invariants hold\n",
      static_cast<unsigned long>(kSteps), static_cast<unsigned long>(uncut.released_count),
      static_cast<unsigned long long>(uncut.flash_operations + 1));
}

}  // namespace
