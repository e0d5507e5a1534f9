// The cross-endianness images: a device's storage (the ledger's and the
// report queue's partitions, on-flash formats) and its pending batch (the
// wire format), written the same way on every target. Both formats are
// defined byte by byte, so a little-endian and a big-endian CPU must write
// the same bytes and read each other's. endian_image_writer prints them
// (tests/vectors/endian_*.hex); endian_image_test reads the other byte
// order's file and continues it.
#ifndef BLUR_TESTS_ENDIAN_IMAGES_H
#define BLUR_TESTS_ENDIAN_IMAGES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "blur/compat/std_facilities.h"  // placement new, also where the toolchain has no <new>

#include "blur/client.h"
#include "sim_port.h"

namespace blur {
namespace endian_images {

constexpr uint32_t kFlashSize = sim::SimPort::kBlockSize * sim::SimPort::kBlockCount;
constexpr size_t kBatchCapacity = 1024;     // the batches are 248 and 166 B
constexpr uint64_t kFirstSeed = 0xE1D1A4;   // the first boot's entropy
constexpr uint64_t kSecondSeed = 0xB16E4D;  // the second boot's
constexpr uint32_t kNat = kEpsilonMicrosPerNat;

// One boot's result: the storage after it and the batch it would send.
struct Image {
  uint8_t flash[kFlashSize];
  uint8_t batch[kBatchCapacity];
  size_t batch_size;
  size_t batch_count;
};

// What endian_image_test checks on a read image, besides its bytes: the
// charges below add up to 6.25 nats a round (12 reports, 6 left pending)
// in the first boot, 4.5 nats more (4 reports, all pending) in the second.
struct Expected {
  uint64_t spent_micros;
  uint64_t next_report_id;
  uint32_t pending_count;
};
constexpr Expected kAfterFirst{12500000, 12, 6};
constexpr Expected kAfterSecond{17000000, 16, 4};

// Every kind of ledger record and queue entry: caps per metric, a window,
// memoized metrics (the ledger's memo records), words (long payloads).
inline Status add_metrics(Client& client) {
  const struct {
    uint32_t id;
    MechanismId mechanism;
    EpsilonMicros epsilon;
    uint32_t domain;
    EpsilonMicros longitudinal;
  } metrics[] = {
      {1, MechanismId::kBinaryRandomizedResponse, kNat, 2, 0},
      {2, MechanismId::kOptimizedUnaryEncoding, kNat / 2, 40, 0},
      {3, MechanismId::kDiscreteLaplace, 3 * kNat / 4, 1000, 0},
      {4, MechanismId::kRappor, kNat, 128, 4 * kNat},
      {5, MechanismId::kOptimizedLocalHashing, kNat, 300, 0},
      {6, MechanismId::kPrefixExtension, 2 * kNat, 8, 0},
  };
  for (const auto& m : metrics) {
    const Status s = client.add_metric(m.id, m.mechanism, m.epsilon, m.domain, m.longitudinal);
    if (s != Status::kOk) return s;
  }
  return Status::kOk;
}

inline LedgerPolicy policy() {
  LedgerPolicy p;
  p.lifetime_cap_micros = 50 * uint64_t{kNat};
  p.window_seconds = 86400;
  p.window_allowance_micros = 20 * uint64_t{kNat};
  p.metric_caps[0] = MetricCap{4, 10 * uint64_t{kNat}};
  p.metric_caps[1] = MetricCap{6, 12 * uint64_t{kNat}};
  p.metric_cap_count = 2;
  return p;
}

inline Status finish(const Client& client, sim::SimPort& port, Image* out) {
  memcpy(out->flash, port.flash(), kFlashSize);
  uint64_t token = 0;
  return client.pending_batch(out->batch, sizeof out->batch, &out->batch_size, &out->batch_count,
                              &token);
}

// The client and the port live in static storage (large for a Cortex-M
// stack), made anew for each boot.
inline Client& fresh_client() {
  static Client client;
  client.~Client();
  return *new (&client) Client();
}
inline sim::SimPort& fresh_port(uint64_t seed) {
  static sim::SimPort port(seed);
  port.~SimPort();
  return *new (&port) sim::SimPort(seed);
}

// First boot on blank storage: provision, record on every metric, send and
// acknowledge a batch, record again (left pending).
inline Status write_first(Image* out) {
  sim::SimPort& port = fresh_port(kFirstSeed);
  Client& client = fresh_client();
  if (client.open(port.port()) != Status::kNotProvisioned) return Status::kStorageCorrupt;
  Status s = client.provision(policy());
  if (s == Status::kOk) s = add_metrics(client);
  const uint32_t values[][2] = {{1, 1}, {2, 17}, {3, 512}, {4, 99}, {5, 250}};
  for (const auto& v : values) {
    if (s == Status::kOk) s = client.record(v[0], v[1]);
  }
  if (s == Status::kOk) s = client.record_word(6, "endian", 6);
  uint64_t token = 0;
  if (s == Status::kOk)
    s = client.pending_batch(out->batch, sizeof out->batch, &out->batch_size, &out->batch_count,
                             &token);
  if (s == Status::kOk) s = client.acknowledge(token);
  port.advance_time(3600);
  const uint32_t more[][2] = {{1, 0}, {2, 39}, {3, 0}, {4, 99}, {4, 7}};
  for (const auto& v : more) {
    if (s == Status::kOk) s = client.record(v[0], v[1]);
  }
  if (s == Status::kOk) s = client.record_word(6, "bigendian", 9);
  return s == Status::kOk ? finish(client, port, out) : s;
}

// Second boot on `first`'s storage (from any target): reopen, acknowledge
// the pending batch, record more.
inline Status write_second(const uint8_t* first_flash, Image* out) {
  sim::SimPort& port = fresh_port(kSecondSeed);
  memcpy(port.flash(), first_flash, kFlashSize);
  port.advance_time(7200);
  Client& client = fresh_client();
  Status s = client.open(port.port());
  if (s == Status::kOk) s = add_metrics(client);
  uint64_t token = 0;
  if (s == Status::kOk)
    s = client.pending_batch(out->batch, sizeof out->batch, &out->batch_size, &out->batch_count,
                             &token);
  if (s == Status::kOk) s = client.acknowledge(token);
  const uint32_t values[][2] = {{4, 7}, {5, 0}, {2, 3}};
  for (const auto& v : values) {
    if (s == Status::kOk) s = client.record(v[0], v[1]);
  }
  if (s == Status::kOk) s = client.record_word(6, "order", 5);
  return s == Status::kOk ? finish(client, port, out) : s;
}

inline Expected state(const Client& client) {
  return Expected{client.ledger().spent_micros(), client.ledger().next_report_id(),
                  client.queue().pending_count()};
}

}  // namespace endian_images
}  // namespace blur

#endif  // BLUR_TESTS_ENDIAN_IMAGES_H
