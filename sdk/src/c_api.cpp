// The C API (blur.h) over blur::Client: C callbacks adapted to the C++
// port, statuses passed through by value (their numbers are the same).
#include "blur/compat/std_facilities.h"

#include "blur/blur.h"
#include "blur/client.h"
#include "blur/version.h"

namespace {

using blur::Status;

#define BLUR_SAME(c, cpp) static_assert(static_cast<int>(c) == static_cast<int>(Status::cpp), #c)
BLUR_SAME(BLUR_OK, kOk);
BLUR_SAME(BLUR_INVALID_ARGUMENT, kInvalidArgument);
BLUR_SAME(BLUR_BUFFER_TOO_SMALL, kBufferTooSmall);
BLUR_SAME(BLUR_ENTROPY_FAILURE, kEntropyFailure);
BLUR_SAME(BLUR_STORAGE_FAILURE, kStorageFailure);
BLUR_SAME(BLUR_STORAGE_CORRUPT, kStorageCorrupt);
BLUR_SAME(BLUR_NOT_PROVISIONED, kNotProvisioned);
BLUR_SAME(BLUR_ALREADY_PROVISIONED, kAlreadyProvisioned);
BLUR_SAME(BLUR_BUDGET_EXHAUSTED, kBudgetExhausted);
BLUR_SAME(BLUR_LEDGER_CLOSED, kLedgerClosed);
BLUR_SAME(BLUR_ITERATION_CAP, kIterationCap);
BLUR_SAME(BLUR_ENCODING_FAILURE, kEncodingFailure);
BLUR_SAME(BLUR_CRYPTO_FAILURE, kCryptoFailure);
BLUR_SAME(BLUR_WINDOW_BUDGET_EXHAUSTED, kWindowBudgetExhausted);
BLUR_SAME(BLUR_METRIC_BUDGET_EXHAUSTED, kMetricBudgetExhausted);
BLUR_SAME(BLUR_CLOCK_FAILURE, kClockFailure);
BLUR_SAME(BLUR_STORAGE_ROLLBACK, kStorageRollback);
BLUR_SAME(BLUR_QUEUE_FULL, kQueueFull);
BLUR_SAME(BLUR_MEMO_TABLE_FULL, kMemoTableFull);
BLUR_SAME(BLUR_TRANSPORT_FAILURE, kTransportFailure);
BLUR_SAME(BLUR_NOT_BUILT, kNotBuilt);
BLUR_SAME(BLUR_STORAGE_WORN_OUT, kStorageWornOut);
BLUR_SAME(BLUR_STORAGE_INCOMPATIBLE, kStorageIncompatible);
BLUR_SAME(BLUR_PARTITIONS_OVERLAP, kPartitionsOverlap);
BLUR_SAME(BLUR_CONFIGURATION_CHANGED, kConfigurationChanged);
#undef BLUR_SAME
// The C structs' capacities are the C++ ones (both from config.h).
static_assert(BLUR_MAX_METRICS == blur::kMaxClientMetrics, "BLUR_MAX_METRICS");
static_assert(sizeof(blur_policy::metric_caps) / sizeof(blur_metric_cap) == blur::kMaxLedgerMetrics,
              "blur_policy::metric_caps");

blur_status to_c(Status status) { return static_cast<blur_status>(status); }

}  // namespace

// The C client: the C port (whose callbacks the C++ port forwards to) and
// the C++ client.
struct blur_client {
  blur_port c_port;
  blur::Client client;

  static blur_client* of(void* context) { return static_cast<blur_client*>(context); }
  static Status entropy(void* context, uint8_t* out, size_t length) {
    const blur_port& p = of(context)->c_port;
    return p.entropy(p.context, out, length) == 0 ? Status::kOk : Status::kEntropyFailure;
  }
  static Status read(void* context, uint32_t block, uint32_t offset, uint8_t* out, uint32_t size) {
    const blur_port& p = of(context)->c_port;
    return p.read(p.context, block, offset, out, size) == 0 ? Status::kOk : Status::kStorageFailure;
  }
  static Status prog(void* context, uint32_t block, uint32_t offset, const uint8_t* data,
                     uint32_t size) {
    const blur_port& p = of(context)->c_port;
    return p.prog(p.context, block, offset, data, size) == 0 ? Status::kOk
                                                             : Status::kStorageFailure;
  }
  static Status erase(void* context, uint32_t block) {
    const blur_port& p = of(context)->c_port;
    return p.erase(p.context, block) == 0 ? Status::kOk : Status::kStorageFailure;
  }
  static Status sync(void* context) {
    const blur_port& p = of(context)->c_port;
    return p.sync(p.context) == 0 ? Status::kOk : Status::kStorageFailure;
  }
  static Status now(void* context, uint64_t* seconds) {
    const blur_port& p = of(context)->c_port;
    return p.now(p.context, seconds) == 0 ? Status::kOk : Status::kClockFailure;
  }
  static Status counter_read(void* context, uint64_t* value) {
    const blur_port& p = of(context)->c_port;
    return p.counter_read(p.context, value) == 0 ? Status::kOk : Status::kStorageFailure;
  }
  static Status counter_advance(void* context, uint64_t value) {
    const blur_port& p = of(context)->c_port;
    return p.counter_advance(p.context, value) == 0 ? Status::kOk : Status::kStorageFailure;
  }
};

static_assert(sizeof(blur_client) <= BLUR_CLIENT_MEMORY_SIZE,
              "blur_client does not fit BLUR_CLIENT_MEMORY_SIZE: raise it (blur/config.h)");

namespace {

// Places the client in `memory` and opens it on the given partitions, or
// (ledger == nullptr) on the default ones.
blur_status open_client(void* memory, size_t memory_size, const blur_port* port,
                        const blur::Partition* ledger, const blur::Partition* queue,
                        blur_client** client) {
  if (memory == nullptr || memory_size < sizeof(blur_client) || port == nullptr ||
      client == nullptr || reinterpret_cast<uintptr_t>(memory) % alignof(blur_client) != 0 ||
      port->entropy == nullptr || port->read == nullptr || port->prog == nullptr ||
      port->erase == nullptr || port->sync == nullptr ||
      (port->counter_read == nullptr) != (port->counter_advance == nullptr) ||
      port->erased_zero > 1) {
    return BLUR_INVALID_ARGUMENT;
  }
  blur_client* c = new (memory) blur_client{*port, {}};
  const bool counter = port->counter_read != nullptr;
  blur::Port cpp_port{c,
                      &blur_client::entropy,
                      &blur_client::read,
                      &blur_client::prog,
                      &blur_client::erase,
                      &blur_client::sync,
                      port->block_size,
                      port->block_count,
                      port->now != nullptr ? &blur_client::now : nullptr,
                      counter ? &blur_client::counter_read : nullptr,
                      counter ? &blur_client::counter_advance : nullptr};
  cpp_port.prog_size = port->prog_size == 0 ? 1 : port->prog_size;
  cpp_port.erase_value = port->erased_zero != 0 ? 0x00 : 0xFF;
  const Status opened =
      ledger == nullptr ? c->client.open(cpp_port) : c->client.open(cpp_port, *ledger, *queue);
  if (opened == Status::kOk || opened == Status::kNotProvisioned) *client = c;
  return to_c(opened);
}

}  // namespace

extern "C" {

blur_status blur_open(void* memory, size_t memory_size, const blur_port* port,
                      blur_client** client) {
  return open_client(memory, memory_size, port, nullptr, nullptr, client);
}

blur_status blur_open_partitioned(void* memory, size_t memory_size, const blur_port* port,
                                  const blur_partition* ledger, const blur_partition* queue,
                                  blur_client** client) {
  if (ledger == nullptr || queue == nullptr) return BLUR_INVALID_ARGUMENT;
  const blur::Partition cpp_ledger{ledger->first_block, ledger->block_count};
  const blur::Partition cpp_queue{queue->first_block, queue->block_count};
  return open_client(memory, memory_size, port, &cpp_ledger, &cpp_queue, client);
}

blur_status blur_provision(blur_client* client, const blur_policy* policy) {
  if (client == nullptr || policy == nullptr ||
      policy->metric_cap_count > BLUR_LEDGER_MAX_METRICS) {
    return BLUR_INVALID_ARGUMENT;
  }
  blur::LedgerPolicy cpp;
  cpp.lifetime_cap_micros = policy->lifetime_cap_micros;
  cpp.window_seconds = policy->window_seconds;
  cpp.window_allowance_micros = policy->window_allowance_micros;
  cpp.metric_cap_count = policy->metric_cap_count;
  for (uint32_t i = 0; i < policy->metric_cap_count; ++i) {
    cpp.metric_caps[i] = {policy->metric_caps[i].metric_id, policy->metric_caps[i].cap_micros};
  }
  return to_c(client->client.provision(cpp));
}

blur_status blur_add_metric(blur_client* client, const blur_metric* metric) {
  if (client == nullptr || metric == nullptr || !blur::is_mechanism(metric->mechanism)) {
    return BLUR_INVALID_ARGUMENT;
  }
  return to_c(client->client.add_metric(
      metric->metric_id, static_cast<blur::MechanismId>(metric->mechanism), metric->epsilon_micros,
      metric->domain_size, metric->longitudinal_epsilon_micros, metric->rounding_buckets));
}

blur_status blur_record(blur_client* client, uint32_t metric_id, uint32_t value) {
  if (client == nullptr) return BLUR_INVALID_ARGUMENT;
  return to_c(client->client.record(metric_id, value));
}

blur_status blur_record_word(blur_client* client, uint32_t metric_id, const char* word,
                             size_t size) {
  if (client == nullptr) return BLUR_INVALID_ARGUMENT;
  return to_c(client->client.record_word(metric_id, word, size));
}

blur_status blur_pending_batch(blur_client* client, uint8_t* buffer, size_t capacity,
                               size_t* written, size_t* count, uint64_t* ack_token) {
  if (client == nullptr) return BLUR_INVALID_ARGUMENT;
  return to_c(client->client.pending_batch(buffer, capacity, written, count, ack_token));
}

blur_status blur_acknowledge(blur_client* client, uint64_t ack_token) {
  if (client == nullptr) return BLUR_INVALID_ARGUMENT;
  return to_c(client->client.acknowledge(ack_token));
}

blur_status blur_get_budget(const blur_client* client, blur_budget* budget) {
  if (client == nullptr || budget == nullptr) return BLUR_INVALID_ARGUMENT;
  const blur::Ledger& ledger = client->client.ledger();
  if (!ledger.is_open()) return BLUR_LEDGER_CLOSED;
  budget->lifetime_cap_micros = ledger.lifetime_cap_micros();
  budget->spent_micros = ledger.spent_micros();
  budget->remaining_micros = ledger.remaining_micros();
  budget->window_start = ledger.window_start();
  budget->window_spent_micros = ledger.window_spent_micros();
  budget->pending_reports = client->client.queue().pending_count();
  return BLUR_OK;
}

blur_status blur_device_nonce(const blur_client* client, uint64_t* nonce) {
  if (client == nullptr || nonce == nullptr) return BLUR_INVALID_ARGUMENT;
  if (!client->client.ledger().is_open()) return BLUR_LEDGER_CLOSED;
  *nonce = client->client.ledger().device_nonce();
  return BLUR_OK;
}

static_assert(BLUR_ENROLLMENT_BODY_SIZE == blur::kEnrollmentBodySize, "blur/enrollment.h");
static_assert(BLUR_ENROLLMENT_BODY_WITH_TOKEN_SIZE == blur::kEnrollmentBodyWithTokenSize &&
                  BLUR_MAX_DEVICE_TOKEN_LENGTH == blur::kMaxDeviceTokenLength,
              "blur/enrollment.h");

blur_status blur_enrollment_body(const blur_client* client, char* buffer, size_t capacity) {
  if (client == nullptr) return BLUR_INVALID_ARGUMENT;
  return to_c(client->client.enrollment_body(buffer, capacity));
}

blur_status blur_enrollment_body_with_token(const blur_client* client, const char* device_token,
                                            char* buffer, size_t capacity) {
  if (client == nullptr || device_token == nullptr) return BLUR_INVALID_ARGUMENT;
  return to_c(client->client.enrollment_body(buffer, capacity, device_token));
}

const char* blur_status_name(blur_status status) {
  return blur::status_name(static_cast<Status>(status));
}

uint32_t blur_sdk_version(void) { return blur::kSdkVersion; }

}  // extern "C"
