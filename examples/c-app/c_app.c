/* A plain C app using Blur through its C API (blur/blur.h).
 *
 *   blur-c-app --storage FILE [--ack TOKEN] [--batch OUT] [VALUE...]
 *
 * Opens (or provisions) the device state in FILE, acknowledges TOKEN if
 * given (the collector stored that batch), records each VALUE for three
 * metrics (1: rr of VALUE % 2, 2: oue over 16 values, 3: discrete Laplace
 * over 0..100), prints the budget, and writes the pending reports as one
 * blur.ReportBatch to OUT with its acknowledgement token on stdout.
 *
 * The port below is what an app supplies: entropy from getrandom(2), a
 * storage file with NOR-flash rules and fsync, time(2) as the clock. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "blur/blur.h"

enum { kBlockSize = 4096, kBlockCount = 8 };

typedef struct file_port {
  int fd;
} file_port;

static int port_entropy(void* context, uint8_t* out, size_t length) {
  (void)context;
  while (length > 0) {
    const ssize_t n = getrandom(out, length, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    out += n;
    length -= (size_t)n;
  }
  return 0;
}

static int in_range(uint32_t block, uint32_t offset, uint32_t size) {
  return block < kBlockCount && offset <= kBlockSize && size <= kBlockSize - offset;
}

static int port_read(void* context, uint32_t block, uint32_t offset, uint8_t* out, uint32_t size) {
  const file_port* port = context;
  if (!in_range(block, offset, size)) return -1;
  const off_t at = (off_t)block * kBlockSize + offset;
  return pread(port->fd, out, size, at) == (ssize_t)size ? 0 : -1;
}

static int port_prog(void* context, uint32_t block, uint32_t offset, const uint8_t* data,
                     uint32_t size) {
  const file_port* port = context;
  uint8_t current[256];
  for (uint32_t done = 0; done < size;) { /* NOR rule: only erased bytes are programmed */
    const uint32_t n = size - done < sizeof current ? size - done : (uint32_t)sizeof current;
    if (port_read(context, block, offset + done, current, n) != 0) return -1;
    for (uint32_t i = 0; i < n; ++i) {
      if (current[i] != 0xFF) return -1;
    }
    done += n;
  }
  const off_t at = (off_t)block * kBlockSize + offset;
  return pwrite(port->fd, data, size, at) == (ssize_t)size ? 0 : -1;
}

static int port_erase(void* context, uint32_t block) {
  const file_port* port = context;
  uint8_t erased[kBlockSize];
  if (block >= kBlockCount) return -1;
  memset(erased, 0xFF, sizeof erased);
  return pwrite(port->fd, erased, sizeof erased, (off_t)block * kBlockSize) == kBlockSize ? 0 : -1;
}

static int port_sync(void* context) {
  const file_port* port = context;
  return fsync(port->fd);
}

static int port_now(void* context, uint64_t* seconds) {
  (void)context;
  const time_t t = time(NULL);
  if (t < 0) return -1;
  *seconds = (uint64_t)t;
  return 0;
}

/* Opens FILE, creating it erased (0xFF) on first use. */
static int open_storage(const char* path, file_port* port) {
  port->fd = open(path, O_RDWR | O_CREAT, 0600);
  if (port->fd < 0) return -1;
  const off_t size = lseek(port->fd, 0, SEEK_END);
  if (size == 0) {
    for (uint32_t block = 0; block < kBlockCount; ++block) {
      if (port_erase(port, block) != 0) return -1;
    }
    return fsync(port->fd);
  }
  return size == (off_t)kBlockSize * kBlockCount ? 0 : -1;
}

static int fail(const char* what, blur_status status) {
  fprintf(stderr, "blur-c-app: %s: %s\n", what, blur_status_name(status));
  return 1;
}

static _Alignas(16) uint8_t client_memory[BLUR_CLIENT_MEMORY_SIZE];
static uint8_t batch[64 * 1024];

int main(int argc, char** argv) {
  const char* storage = NULL;
  const char* batch_path = NULL;
  const char* ack = NULL;
  const char* enrollment_path = NULL;
  int first_value = argc;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--storage") == 0 && i + 1 < argc) {
      storage = argv[++i];
    } else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc) {
      batch_path = argv[++i];
    } else if (strcmp(argv[i], "--ack") == 0 && i + 1 < argc) {
      ack = argv[++i];
    } else if (strcmp(argv[i], "--enrollment-body") == 0 && i + 1 < argc) {
      enrollment_path = argv[++i];
    } else {
      first_value = i;
      break;
    }
  }
  if (storage == NULL) {
    fprintf(stderr,
            "usage: blur-c-app --storage FILE [--ack TOKEN] [--batch OUT] "
            "[--enrollment-body OUT] [VALUE...]\n");
    return 2;
  }
  file_port file;
  if (open_storage(storage, &file) != 0) {
    fprintf(stderr, "blur-c-app: cannot use %s as storage (%s)\n", storage, strerror(errno));
    return 1;
  }
  /* Fields left out are zero, their defaults: no monotonic counter (a copy
   * of the file restores its budget: see ports/posix/posix_port.h), a
   * program unit of 1 byte, erase to 0xFF. */
  const blur_port port = {.context = &file,
                          .entropy = port_entropy,
                          .read = port_read,
                          .prog = port_prog,
                          .erase = port_erase,
                          .sync = port_sync,
                          .now = port_now,
                          .block_size = kBlockSize,
                          .block_count = kBlockCount};
  blur_client* client = NULL;
  blur_status status = blur_open(client_memory, sizeof client_memory, &port, &client);
  if (status == BLUR_NOT_PROVISIONED) {
    blur_policy policy;
    memset(&policy, 0, sizeof policy);
    policy.lifetime_cap_micros = 50 * 1000000ull; /* 50 nats for the device's life */
    policy.window_seconds = 86400;                /* and 10 per day */
    policy.window_allowance_micros = 10 * 1000000ull;
    status = blur_provision(client, &policy);
    if (status == BLUR_OK) printf("provisioned a new device\n");
  }
  if (status != BLUR_OK) return fail("open", status);

  const blur_metric metrics[] = {{1, BLUR_MECHANISM_RR, 1000000, 2, 0, 0},
                                 {2, BLUR_MECHANISM_OUE, 2000000, 16, 0, 0},
                                 {3, BLUR_MECHANISM_LAPLACE, 1000000, 101, 0, 0}};
  for (size_t i = 0; i < sizeof metrics / sizeof metrics[0]; ++i) {
    status = blur_add_metric(client, &metrics[i]);
    if (status != BLUR_OK) return fail("add metric", status);
  }
  if (ack != NULL) {
    status = blur_acknowledge(client, strtoull(ack, NULL, 10));
    if (status != BLUR_OK) return fail("acknowledge", status);
  }
  for (int i = first_value; i < argc; ++i) {
    const uint32_t value = (uint32_t)strtoul(argv[i], NULL, 10);
    const uint32_t values[3] = {value % 2, value % 16, value % 101};
    for (int m = 0; m < 3; ++m) {
      status = blur_record(client, metrics[m].metric_id, values[m]);
      if (status != BLUR_OK) {
        fprintf(stderr, "blur-c-app: metric %u: %s (nothing sent for it)\n", metrics[m].metric_id,
                blur_status_name(status));
      }
    }
  }
  blur_budget budget;
  status = blur_get_budget(client, &budget);
  if (status != BLUR_OK) return fail("budget", status);
  printf("budget: spent %.6f of %.6f nats (today %.6f), %u reports pending\n",
         budget.spent_micros / 1e6, budget.lifetime_cap_micros / 1e6,
         budget.window_spent_micros / 1e6, budget.pending_reports);
  if (enrollment_path != NULL) {
    /* What the app POSTs to /v1/enroll for its device token. */
    char body[BLUR_ENROLLMENT_BODY_SIZE];
    status = blur_enrollment_body(client, body, sizeof body);
    if (status != BLUR_OK) return fail("enrollment body", status);
    FILE* out = fopen(enrollment_path, "wb");
    if (out == NULL || fputs(body, out) < 0 || fclose(out) != 0) {
      fprintf(stderr, "blur-c-app: cannot write %s\n", enrollment_path);
      return 1;
    }
  }
  if (batch_path != NULL) {
    size_t written = 0, count = 0;
    uint64_t token = 0;
    status = blur_pending_batch(client, batch, sizeof batch, &written, &count, &token);
    if (status != BLUR_OK) return fail("pending batch", status);
    FILE* out = fopen(batch_path, "wb");
    if (out == NULL || fwrite(batch, 1, written, out) != written || fclose(out) != 0) {
      fprintf(stderr, "blur-c-app: cannot write %s\n", batch_path);
      return 1;
    }
    printf("batch: %zu reports, %zu bytes, token %" PRIu64 "\n", count, written, token);
  }
  close(file.fd);
  return 0;
}
