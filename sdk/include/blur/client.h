// A whole device in one object: DRBG, ledger, report queue and the
// configured metrics, on one port's storage, each store on its own
// Partition (by default the ledger on blocks 0..kLedgerBlocks-1, the report
// queue on the rest). record() is the safe order for a report: room in the
// queue, durable charge, randomize, durable append. The C API (blur.h) is
// a thin layer over this class.
#ifndef BLUR_CLIENT_H
#define BLUR_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "blur/config.h"
#include "blur/discovery/word.h"
#include "blur/enrollment.h"
#include "blur/mechanisms/any_mechanism.h"
#include "blur/mechanisms/mechanism.h"
#include "blur/report/report.h"
#include "blur/report/report_encoding.h"
#include "blur/sampling/rng.h"
#include "blur/storage/ledger.h"
#include "blur/storage/report_queue.h"

namespace blur {

// From config.h: BLUR_MAX_CLIENT_METRICS, BLUR_LEDGER_BLOCKS.
inline constexpr uint32_t kMaxClientMetrics = BLUR_MAX_CLIENT_METRICS;
inline constexpr uint32_t kLedgerBlocks = BLUR_LEDGER_BLOCKS;  // the queue starts after them

class Client {
 public:
  Client() = default;
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Seeds the DRBG from port.entropy, opens the report queue and the ledger
  // (its status: kNotProvisioned on blank storage), each on its partition.
  // kPartitionsOverlap if the two share a block; kInvalidArgument if one
  // does not fit the port's storage.
  Status open(const Port& port, Partition ledger, Partition queue);
  // The default partitions: the ledger on the first kLedgerBlocks blocks,
  // the report queue on all the others.
  Status open(const Port& port);
  Status provision(const LedgerPolicy& policy);
  // longitudinal_epsilon != 0: memoized reports, the permanent response at
  // that epsilon and every report charging epsilon_micros, the same for
  // every value (loloha.h, which requires it; memoized.h: sue, rappor;
  // memoized_mean.h: onebit, with rounding_buckets dividing domain_size - 1).
  // kConfigurationChanged if the open ledger holds this metric id memoized
  // with another configuration (a new configuration needs a new id).
  Status add_metric(uint32_t metric_id, MechanismId mechanism, EpsilonMicros epsilon_micros,
                    uint32_t domain_size, EpsilonMicros longitudinal_epsilon = 0,
                    uint32_t rounding_buckets = 0);
  // An index in the metric's domain (every mechanism but the discovery ones).
  Status record(uint32_t metric_id, uint32_t value);
  // A word for a discovery metric (pem, sfp). Never refused for its
  // content (that would show the content): a word longer than the metric's
  // domain size (its longest word) is cut to it, and an empty word or one
  // with a character outside [a-z'] is sent as the reserved word "'"
  // (kReservedWord). kInvalidArgument only for word == nullptr with size > 0.
  Status record_word(uint32_t metric_id, const char* word, size_t size);
  // See ReportQueue::pending_batch; the token is the last id to acknowledge.
  Status pending_batch(uint8_t* buffer, size_t capacity, size_t* written, size_t* count,
                       uint64_t* ack_token) const;
  Status acknowledge(uint64_t ack_token) { return queue_.acknowledge(ack_token); }
  // The body of the collector's POST /v1/enroll for this device
  // (blur/enrollment.h: its nonce and the key derived from its device
  // secret), NUL-terminated; `device_token` (may be null) is the token a
  // collector issued it before, the proof a nonce with reports but no key
  // yet needs. kLedgerClosed before a ledger is open; kInvalidArgument for a
  // ledger provisioned without a device secret (Ledger::provision's
  // four-argument form; provision() always draws one); else
  // write_enrollment_body()'s statuses.
  Status enrollment_body(char* buffer, size_t capacity, const char* device_token = nullptr) const;

  const Ledger& ledger() const { return ledger_; }
  const ReportQueue& queue() const { return queue_; }

 private:
  struct Metric {
    uint32_t id;
    AnyMechanism mechanism;
  };
  struct WordText {  // record_word's text, fitted to the metric (Word::fitted)
    const char* text;
    size_t size;
  };
  // record() and record_word(): Value is uint32_t or WordText.
  template <typename Value>
  Status record_value(uint32_t metric_id, const Value& value);
  template <bool kMemoized>
  Status record_drawn(const ReportDraw& draw, size_t bound);

  Port port_{};
  Partition ledger_partition_{};
  bool ready_ = false;  // DRBG seeded and queue open
  Rng rng_;
  Ledger ledger_;
  ReportQueue queue_;
  Metric metrics_[kMaxClientMetrics] = {};
  uint32_t metric_count_ = 0;
  // Scratch, kept off the stack; always written before read, so left
  // uninitialized (no zeroing code in the constructor).
  Report report_;
  uint8_t message_[kMaxEncodedReportSize];
};

}  // namespace blur

#endif  // BLUR_CLIENT_H
