// Exhaustive power cuts (the littlefs emubd idea), on three flash
// geometries: byte-programmable NOR (prog_size 1, erased 0xFF), ECC flash
// that refuses a second program of its 8-byte words, and 16-byte units that
// erase to 0x00. Every run also checks that the SDK never issued a
// misaligned program or programmed a unit twice. First the ledger alone:
// a scenario of many
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

#include "blur/compat/std_facilities.h"

#include "blur/mechanisms/binary_randomized_response.h"
#include "blur/storage/ledger.h"
#include "blur/report/report.h"
#include "blur/report/report_encoding.h"
#include "blur/storage/report_queue.h"
#include "blur/sampling/rng.h"
#include "sim_port.h"

namespace {

using blur::Ledger;
using blur::Status;
using blur::sim::SimPort;

constexpr uint64_t kNat = blur::kEpsilonMicrosPerNat;

struct Geometry {
  const char* name;
  uint32_t prog_size;
  uint8_t erase_value;
  bool ecc;  // refuses a second program of a unit
};
constexpr Geometry kGeometries[] = {
    {"NOR: prog_size 1, erased 0xFF", 1, 0xFF, false},
    {"ECC: prog_size 8, erased 0xFF", 8, 0xFF, true},
    {"prog_size 16, erased 0x00", 16, 0x00, true},
};
// 1 KiB blocks: a ledger block holds a snapshot and several entries, so the
// scenario appends entries and moves the log to the next block.
constexpr uint32_t kBlockSize = 1024;
constexpr uint32_t kBlocks = 6;  // ledger 0-1, report queue 2-5
const Geometry* g_geometry = &kGeometries[0];

// A fresh simulated device on the current geometry, in static storage.
SimPort* fresh_port(uint64_t seed) {
  static uint8_t flash[kBlockSize * kBlocks];
  static uint8_t storage[sizeof(SimPort)];
  blur::flash::Config config = SimPort::default_flash_config(kBlocks);
  config.block_size = kBlockSize;
  config.prog_size = g_geometry->prog_size;
  config.erase_value = g_geometry->erase_value;
  config.refuse_second_program = g_geometry->ecc;
  return new (storage) SimPort(seed, config, flash);
}

// The SDK's side of the flash contract, after a run.
void expect_clean_programs(const SimPort& port, uint64_t cut) {
  EXPECT_EQ(port.misaligned_programs(), 0u) << g_geometry->name << ", cut " << cut;
  EXPECT_EQ(port.reprogrammed_units(), 0u) << g_geometry->name << ", cut " << cut;
}
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
  SimPort* port = fresh_port(7);
  port->cut_power_after(cut, cut + 1);
  bool provisioned = false;
  bool advanced = false;  // the current step's clock advance was applied
  uint64_t durable_spent = 0;
  uint32_t next = 0;
  while (next < kSteps) {
    Ledger ledger;
    const Status opened = ledger.open(port->port(), blur::sim::SimPort::kLedgerPartition);
    if (!provisioned) {
      // Only a first provisioning cut short may leave blank or torn slots.
      if (opened != Status::kOk) {
        EXPECT_TRUE(opened == Status::kNotProvisioned || opened == Status::kStorageCorrupt);
        if (ledger.provision(port->port(), blur::sim::SimPort::kLedgerPartition, policy(), 42) != Status::kOk) {
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
  EXPECT_EQ(final_ledger.open(port->port(), blur::sim::SimPort::kLedgerPartition), Status::kOk);
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
  expect_clean_programs(*port, cut);
  return true;
}

TEST(PowerCut, LedgerSurvivesACutAtEveryFlashOperation) {
  for (const Geometry& geometry : kGeometries) {
    g_geometry = &geometry;
    static ScenarioRun uncut;
    uncut = ScenarioRun();
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
        "%s: %lu steps, %lu charges released; power cut at each of %llu flash operations: "
        "invariants hold\n",
        geometry.name, static_cast<unsigned long>(kSteps),
        static_cast<unsigned long>(uncut.released_count),
        static_cast<unsigned long long>(uncut.flash_operations + 1));
  }
}

// The whole device: ledger (blocks 0-1) and report queue (blocks 2-5) on
// one flash. Each step either records a value (room in the queue, then the
// durable charge, then randomize, encode, append) or sends the pending
// batch to a "collector" and acknowledges it. Power is cut at the k-th
// flash operation of the whole scenario, for every k. Invariants:
//   - everything the ledger invariants above say;
//   - a report appended to the queue is delivered (the scenario ends by
//     draining the queue): nothing charged and queued is lost;
//   - a report is never delivered after its acknowledgement was durable,
//     and is delivered twice only when the acknowledgement of the batch
//     that carried it was cut short;
//   - report ids in the queue are unique.
constexpr uint32_t kDeviceSteps = kSteps;
constexpr uint32_t kMaxIds = 4 * kDeviceSteps;

struct DeviceRun {
  uint64_t appended[kMaxIds];
  uint32_t appended_count = 0;
  uint8_t delivered[kMaxIds] = {};  // times each report id was delivered
  uint8_t uncertain[kMaxIds] = {};  // its batch's acknowledgement was cut
  uint32_t reboots = 0;
  uint64_t flash_operations = 0;
  uint64_t charged_not_queued = 0;  // epsilon spent on reports lost to a cut (allowed)
};

// The report ids in an encoded batch: ReportBatch.reports (3) each start
// with Report.report_id (1, varint).
uint32_t batch_ids(const uint8_t* batch, size_t length, uint64_t* ids) {
  uint32_t n = 0;
  size_t at = 1 + 2 + 1 + 8;  // sdk_version (tag + 2-byte varint), device_nonce (tag + 8)
  while (at < length) {
    EXPECT_EQ(batch[at], 0x1A);
    ++at;
    uint32_t size = 0;
    for (int shift = 0;; shift += 7) {
      size |= static_cast<uint32_t>(batch[at] & 0x7F) << shift;
      if ((batch[at++] & 0x80) == 0) break;
    }
    EXPECT_EQ(batch[at], 0x08);
    uint64_t id = 0;
    for (size_t i = at + 1, shift = 0;; ++i, shift += 7) {
      id |= static_cast<uint64_t>(batch[i] & 0x7F) << shift;
      if ((batch[i] & 0x80) == 0) break;
    }
    ids[n++] = id;
    at += size;
  }
  return n;
}

bool run_device(uint64_t cut, DeviceRun* out) {
  SimPort* port = fresh_port(9);
  port->cut_power_after(cut, cut + 3);
  const auto rr = blur::BinaryRandomizedResponse::create(150000);
  EXPECT_TRUE(rr.ok());
  bool provisioned = false, advanced = false;
  uint64_t durable_spent = 0, durable_floor = 0;
  uint32_t next = 0;
  bool draining = false;
  const auto finish_step = [&] {
    ++next;
    advanced = false;
    if (next == kDeviceSteps) draining = true;
  };
  while (next < kDeviceSteps || draining) {
    Ledger ledger;
    blur::ReportQueue queue;
    blur::Rng rng;
    const Status opened = ledger.open(port->port(), blur::sim::SimPort::kLedgerPartition);
    if (!provisioned) {
      if (opened != Status::kOk) {
        if (ledger.provision(port->port(), blur::sim::SimPort::kLedgerPartition, policy(), 42) != Status::kOk) {
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
    EXPECT_EQ(queue.open(port->port(), blur::Partition{2, 4}), Status::kOk) << "cut " << cut;
    EXPECT_GE(queue.ack_floor(), durable_floor) << "cut " << cut;
    EXPECT_EQ(rng.seed(port->port(), nullptr, 0), Status::kOk);
    bool power_lost = false;
    while ((next < kDeviceSteps || draining) && !power_lost) {
      const Step s = step(next);
      const bool send = draining || next % 5 == 4;
      if (!advanced && !draining) port->advance_time(s.advance_seconds);
      advanced = true;
      if (send) {
        static uint8_t batch[2048];
        size_t written = 0, count = 0;
        uint64_t last_id = 0;
        EXPECT_EQ(queue.pending_batch(42, blur::kMaxReportsPerBatch, batch, sizeof batch, &written,
                                      &count, &last_id),
                  Status::kOk);
        if (draining && count == 0) {
          draining = false;
          next = kDeviceSteps;
          break;
        }
        static uint64_t ids[blur::kMaxReportsPerBatch];
        const uint32_t n = batch_ids(batch, written, ids);
        EXPECT_EQ(n, count);
        for (uint32_t i = 0; i < n; ++i) {
          EXPECT_GE(ids[i], durable_floor) << "cut " << cut << ": acknowledged report resent";
          if (ids[i] >= kMaxIds) return false;
          if (out->delivered[ids[i]] > 0) {
            EXPECT_TRUE(out->uncertain[ids[i]]) << "cut " << cut << ": duplicate " << ids[i];
          }
          ++out->delivered[ids[i]];
        }
        if (count > 0) {
          const Status acked = queue.acknowledge(last_id);
          if (acked == Status::kStorageFailure) {
            for (uint32_t i = 0; i < n; ++i) out->uncertain[ids[i]] = 1;
            power_lost = true;
            continue;
          }
          EXPECT_EQ(acked, Status::kOk);
          durable_floor = last_id + 1;
        }
      } else {
        uint8_t message[blur::kMaxEncodedScalarReportSize];
        const Status room = queue.has_room(sizeof message);
        if (room == Status::kOk) {
          blur::Report report;
          const Status made =
              blur::make_report(ledger, rng, rr.value(), s.metric, next % 2, &report);
          if (made == Status::kStorageFailure) {
            power_lost = true;
            continue;
          }
          if (made == Status::kOk) {
            durable_spent = ledger.spent_micros();
            size_t size = 0;
            EXPECT_EQ(blur::encode_report(report, message, sizeof message, &size), Status::kOk);
            const Status queued = queue.append(report.report_id, message, size);
            if (queued == Status::kStorageFailure) {
              out->charged_not_queued += report.epsilon_micros;
              finish_step();  // the charged report is gone with the power; move on
              power_lost = true;
              continue;
            }
            EXPECT_EQ(queued, Status::kOk) << "cut " << cut;
            for (uint32_t i = 0; i < out->appended_count; ++i) {
              EXPECT_NE(out->appended[i], report.report_id) << "cut " << cut;
            }
            out->appended[out->appended_count++] = report.report_id;
          }
        } else {
          EXPECT_EQ(room, Status::kQueueFull) << "cut " << cut;
        }
      }
      if (!draining) finish_step();
    }
    if (power_lost) {
      port->restore_power();
      ++out->reboots;
    }
  }
  for (uint32_t i = 0; i < out->appended_count; ++i) {
    EXPECT_GE(out->delivered[out->appended[i]], 1)
        << "cut " << cut << ": lost report " << out->appended[i];
  }
  out->flash_operations = port->flash_operations();
  expect_clean_programs(*port, cut);
  return true;
}

TEST(PowerCut, DeviceWithQueueSurvivesACutAtEveryFlashOperation) {
  for (const Geometry& geometry : kGeometries) {
    g_geometry = &geometry;
    static DeviceRun uncut;
    uncut = DeviceRun();
    ASSERT_TRUE(run_device(SimPort::kNever, &uncut));
    ASSERT_EQ(uncut.reboots, 0u);
    EXPECT_GT(uncut.appended_count, kDeviceSteps / 4);
    for (uint64_t cut = 0; cut <= uncut.flash_operations; ++cut) {
      static DeviceRun r;
      r = DeviceRun();
      ASSERT_TRUE(run_device(cut, &r));
    }
    printf(
        "%s: %lu steps, %lu reports queued and delivered; power cut at each of %llu flash "
        "operations: invariants hold\n",
        geometry.name, static_cast<unsigned long>(kDeviceSteps),
        static_cast<unsigned long>(uncut.appended_count),
        static_cast<unsigned long long>(uncut.flash_operations + 1));
  }
}

}  // namespace
