/* Blur's C API: for apps (JNI, Swift, C firmware) that must not see C++.
 *
 * One client object lives in memory the caller provides
 * (BLUR_CLIENT_MEMORY_SIZE bytes); nothing is allocated. It owns the DRBG,
 * the privacy-budget ledger, the persisted report queue and up to
 * BLUR_MAX_METRICS metric configurations, all on the storage the caller's
 * port describes, each store on its own range of erase blocks:
 *   blur_open()              the ledger on the first BLUR_LEDGER_BLOCKS
 *                            blocks (default 2), the report queue on all the
 *                            others (at least 3)
 *   blur_open_partitioned()  the ledger and the queue where the caller says
 * The capacities come from blur/config.h: override them for the whole build
 * (the SDK's sources included) with a BLUR_CONFIG_FILE.
 *
 * Typical use:
 *   static uint8_t memory[BLUR_CLIENT_MEMORY_SIZE];
 *   blur_client* client;
 *   blur_status s = blur_open(memory, sizeof memory, &port, &client);
 *   if (s == BLUR_NOT_PROVISIONED) s = blur_provision(client, &policy);
 *   blur_add_metric(client, &metric);          // each boot, same configuration
 *   blur_record(client, metric_id, value);      // charge, randomize, queue
 *   blur_pending_batch(client, buf, cap, &len, &count, &token);  // send buf...
 *   blur_acknowledge(client, token);            // ...after the collector's 200
 *
 * Every function but the last two returns a blur_status; blur_status_name()
 * gives its text.
 * Nothing crosses this header but C types. The client is not thread-safe:
 * serialize calls on one client.
 */
#ifndef BLUR_BLUR_H
#define BLUR_BLUR_H

#include <stddef.h>
#include <stdint.h>

#include "blur/config.h"
#include "blur/mechanisms/mechanism_table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The values of blur::Status (blur/status.h). */
typedef enum blur_status {
  BLUR_OK = 0,
  BLUR_INVALID_ARGUMENT = 1,
  BLUR_BUFFER_TOO_SMALL = 2,
  BLUR_ENTROPY_FAILURE = 3,
  BLUR_STORAGE_FAILURE = 4,
  BLUR_STORAGE_CORRUPT = 5,
  BLUR_NOT_PROVISIONED = 6,
  BLUR_ALREADY_PROVISIONED = 7,
  BLUR_BUDGET_EXHAUSTED = 8,
  BLUR_LEDGER_CLOSED = 9,
  BLUR_ITERATION_CAP = 10,
  BLUR_ENCODING_FAILURE = 11,
  BLUR_CRYPTO_FAILURE = 12,
  BLUR_WINDOW_BUDGET_EXHAUSTED = 13,
  BLUR_METRIC_BUDGET_EXHAUSTED = 14,
  BLUR_CLOCK_FAILURE = 15,
  BLUR_STORAGE_ROLLBACK = 16,
  BLUR_QUEUE_FULL = 17,
  BLUR_MEMO_TABLE_FULL = 18,
  BLUR_TRANSPORT_FAILURE = 19,
  BLUR_NOT_BUILT = 20,
  BLUR_STORAGE_WORN_OUT = 21,
  BLUR_STORAGE_INCOMPATIBLE = 22,
  BLUR_PARTITIONS_OVERLAP = 23,
  BLUR_CONFIGURATION_CHANGED = 24
} blur_status;

/* The platform: callbacks return 0 on success, anything else on failure.
 * Storage has flash semantics (erase sets a block to 0xFF, or to 0x00 with
 * erased_zero; prog writes erased bytes; sync makes them durable). `now`
 * may be NULL (then no window budget); it returns seconds on a clock that
 * survives reboots. New fields are added at the end and zero means their
 * default, so older initializers keep working; designated initializers
 * (.read = ...) also keep -Wmissing-field-initializers quiet. */
typedef struct blur_port {
  void* context;
  int (*entropy)(void* context, uint8_t* out, size_t length);
  int (*read)(void* context, uint32_t block, uint32_t offset, uint8_t* out, uint32_t size);
  int (*prog)(void* context, uint32_t block, uint32_t offset, const uint8_t* data, uint32_t size);
  int (*erase)(void* context, uint32_t block);
  int (*sync)(void* context);
  int (*now)(void* context, uint64_t* seconds);
  uint32_t block_size; /* a multiple of prog_size */
  uint32_t block_count;
  /* Optional, both or neither (NULL): a monotonic counter that survives
   * reflashing the storage (eMMC RPMB, a TPM NV counter, OTP fuses);
   * counter_advance moves it to at least `value`. With it, blur_open refuses
   * a storage image older than the ledger's last write
   * (BLUR_STORAGE_ROLLBACK); without it, restoring an old image restores
   * the old budget, a risk the integrator must accept or prevent. */
  int (*counter_read)(void* context, uint64_t* value);
  int (*counter_advance)(void* context, uint64_t value);
  /* The program unit in bytes: a power of two up to BLUR_MAX_PROG_SIZE
   * (flash with ECC: 8, 16 or 32); every prog call then starts on a unit
   * boundary and covers whole units. 0: the default, 1 (NOR flash). */
  uint32_t prog_size;
  /* 0: erase sets bytes to 0xFF (the default: NOR flash); 1: to 0x00.
   * Other values: BLUR_INVALID_ARGUMENT. */
  uint32_t erased_zero;
} blur_port;

/* A range of the port's erase blocks: [first_block, first_block + block_count). */
typedef struct blur_partition {
  uint32_t first_block;
  uint32_t block_count;
} blur_partition;

/* Mechanisms (values of the wire schema's Mechanism enum), from the one
 * table in blur/mechanisms/mechanism_table.h: BLUR_MECHANISM_RR = 1, _GRR, _SUE, _OUE,
 * _LAPLACE, _ONEBIT, _HR, _OLH, _BLH, _RAPPOR = 10, _PEM, _SFP, _LOLOHA = 13. */
typedef enum blur_mechanism {
#define BLUR_X(id, Cpp, name, C, PROTO, Payload, max_domain) BLUR_MECHANISM_##C = id,
  BLUR_MECHANISM_TABLE(BLUR_X)
#undef BLUR_X
} blur_mechanism;

/* Metrics per client (blur_add_metric). The other capacities are
 * config.h's: BLUR_LEDGER_MAX_METRICS metric caps per policy,
 * BLUR_CLIENT_MEMORY_SIZE bytes of client memory. */
#define BLUR_MAX_METRICS BLUR_MAX_CLIENT_METRICS

typedef struct blur_metric {
  uint32_t metric_id;
  uint32_t mechanism;      /* a blur_mechanism */
  uint32_t epsilon_micros; /* per report, micro-nats (1000000 = 1 nat) */
  uint32_t domain_size;    /* values 0..domain_size-1 (2 for rr) */
  /* 0, or memoized reports (BLUR_MECHANISM_LOLOHA needs it; sue, rappor,
   * onebit may have it): the permanent response is drawn once at this
   * epsilon, and every report charges epsilon_micros, its loss with
   * respect to the permanent response, the same for every value. For any
   * two histories of the device's values the loss is at most that charge
   * per report whose value differs; repeated reports of an unchanging value
   * reveal at most this epsilon about it. onebit: alpha-point rounding, a
   * memoized bit per point, flipped at epsilon_micros in every report.
   * The configuration is pinned in the ledger with the first report:
   * changed under the same id, blur_add_metric answers
   * BLUR_CONFIGURATION_CHANGED. */
  uint32_t longitudinal_epsilon_micros;
  /* memoized onebit only: the number of rounding buckets s (s divides
   * domain_size - 1). Else 0. */
  uint32_t rounding_buckets;
} blur_metric;

typedef struct blur_metric_cap {
  uint32_t metric_id;
  uint64_t cap_micros;
} blur_metric_cap;

/* The device's budget, fixed at provisioning (see blur/storage/ledger.h). */
typedef struct blur_policy {
  uint64_t lifetime_cap_micros;
  uint64_t window_seconds; /* 0: no window */
  uint64_t window_allowance_micros;
  blur_metric_cap metric_caps[BLUR_LEDGER_MAX_METRICS];
  uint32_t metric_cap_count;
} blur_policy;

typedef struct blur_budget {
  uint64_t lifetime_cap_micros;
  uint64_t spent_micros;
  uint64_t remaining_micros;
  uint64_t window_start;
  uint64_t window_spent_micros;
  uint32_t pending_reports;
} blur_budget;

typedef struct blur_client blur_client;

/* Seeds the DRBG from the port and opens the ledger and the queue.
 * BLUR_NOT_PROVISIONED on blank storage (call blur_provision), and the
 * ledger's statuses otherwise; *client is usable after BLUR_OK or
 * BLUR_NOT_PROVISIONED. */
blur_status blur_open(void* memory, size_t memory_size, const blur_port* port,
                      blur_client** client);

/* The same with the caller's partitions: the ledger on `ledger` (at least 2
 * blocks), the report queue on `queue` (at least 3, see report_queue.h).
 * BLUR_PARTITIONS_OVERLAP if they share a block, BLUR_INVALID_ARGUMENT if
 * one lies outside the port's storage. Open a device with the layout it was
 * provisioned with. */
blur_status blur_open_partitioned(void* memory, size_t memory_size, const blur_port* port,
                                  const blur_partition* ledger, const blur_partition* queue,
                                  blur_client** client);

/* Writes the first ledger record (a random device nonce is drawn). Refuses
 * (BLUR_ALREADY_PROVISIONED) when a valid ledger exists, and
 * (BLUR_INVALID_ARGUMENT) more than BLUR_LEDGER_MAX_METRICS metric caps. */
blur_status blur_provision(blur_client* client, const blur_policy* policy);

/* Registers a metric for this session (configure the same ones every boot).
 * BLUR_INVALID_ARGUMENT for an unknown mechanism, a bad epsilon or domain,
 * a repeated id, or more than BLUR_MAX_METRICS metrics;
 * BLUR_CONFIGURATION_CHANGED for a memoized metric id the ledger holds with
 * another configuration. */
blur_status blur_add_metric(blur_client* client, const blur_metric* metric);

/* Randomizes `value` for the metric and queues the report: checks the queue
 * has room (else BLUR_QUEUE_FULL, nothing spent), charges the ledger durably
 * (else a budget status, nothing spent), randomizes, appends. */
blur_status blur_record(blur_client* client, uint32_t metric_id, uint32_t value);

/* The same for a word-discovery metric (BLUR_MECHANISM_PEM or BLUR_MECHANISM_SFP):
 * `size` bytes, ideally lower-case letters and apostrophes. Any text is
 * recorded and charged, never refused for its content (that would show
 * it): past the metric's domain size (its longest word) it is cut, and an
 * empty text or one with another character is sent as the reserved word
 * "'". BLUR_INVALID_ARGUMENT only for word == NULL with size > 0. */
blur_status blur_record_word(blur_client* client, uint32_t metric_id, const char* word,
                             size_t size);

/* The oldest pending reports as one encoded blur.ReportBatch (the body of
 * POST /v1/reports). *count = 0 when nothing is pending. Pass *ack_token
 * to blur_acknowledge once the collector answered 200. */
blur_status blur_pending_batch(blur_client* client, uint8_t* buffer, size_t capacity,
                               size_t* written, size_t* count, uint64_t* ack_token);

blur_status blur_acknowledge(blur_client* client, uint64_t ack_token);

blur_status blur_get_budget(const blur_client* client, blur_budget* budget);

/* The device nonce drawn at provisioning: the identity a collector's device
 * token or certificate binds (BLUR_LEDGER_CLOSED before open). */
blur_status blur_device_nonce(const blur_client* client, uint64_t* nonce);

/* The body of the collector's POST /v1/enroll (Content-Type:
 * application/json) for this device:
 *   {"device_nonce":"<16 hex digits>","device_key":"<64 hex digits>"}
 * NUL-terminated, BLUR_ENROLLMENT_BODY_SIZE bytes with the NUL. The device
 * key is HMAC-SHA256(device secret, "blur.enroll.v1" || nonce): the
 * collector binds the nonce to it at the first enrollment, so nobody else
 * holding the app's secret can take this device's identity
 * (blur/enrollment.h). Send it with "Authorization: Bearer <the app's
 * enrollment secret>"; the answer's "token" is the device token to send as
 * "Authorization: Bearer <token>" on every POST /v1/reports (keep it;
 * enroll again, with the same body, after a 401). BLUR_BUFFER_TOO_SMALL
 * below that capacity; BLUR_INVALID_ARGUMENT for a device provisioned
 * without a device secret. A collector before device keys refuses this
 * body (400), and a collector since then refuses the old one
 * ({"device_nonce"} alone). */
#define BLUR_ENROLLMENT_BODY_SIZE 116
blur_status blur_enrollment_body(const blur_client* client, char* buffer, size_t capacity);

/* The same with ,"device_token":"<device_token>" added: the token a
 * collector issued this device before it had a device key. A device that
 * already has reports on the collector but no key bound there (it enrolled
 * with an SDK before device keys) proves with it that it is that device;
 * send this form once after the update. The token: at most
 * BLUR_MAX_DEVICE_TOKEN_LENGTH characters of [0-9A-Za-z._~+/=-], else
 * BLUR_INVALID_ARGUMENT. The body takes at most
 * BLUR_ENROLLMENT_BODY_WITH_TOKEN_SIZE bytes with its NUL. */
#define BLUR_MAX_DEVICE_TOKEN_LENGTH 128
#define BLUR_ENROLLMENT_BODY_WITH_TOKEN_SIZE \
  (BLUR_ENROLLMENT_BODY_SIZE + 18 + BLUR_MAX_DEVICE_TOKEN_LENGTH)
blur_status blur_enrollment_body_with_token(const blur_client* client, const char* device_token,
                                            char* buffer, size_t capacity);

/* "ok", "lifetime budget exhausted", ... (never NULL). */
const char* blur_status_name(blur_status status);

/* The SDK's version as its batches carry it (blur/version.h):
 * major << 16 | minor << 8 | patch. For bindings that show or check it. */
uint32_t blur_sdk_version(void);

#ifdef __cplusplus
}
#endif

#endif /* BLUR_BLUR_H */
