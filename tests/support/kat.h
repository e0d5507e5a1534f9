// Parser for tests/vectors/*.kat known-answer files (embedded at build time,
// so the same vectors run on the host and on bare-metal targets). No heap.
#ifndef BLUR_TESTS_KAT_H
#define BLUR_TESTS_KAT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

namespace blur_test {

struct KatReport {
  uint64_t report_id;
  uint32_t metric_id;
  uint32_t mechanism;
  uint32_t epsilon_micros;
  uint32_t domain_size;
  uint32_t value;           // payload: `bit` for mechanism 1, `index` for mechanism 2
  int64_t number;           // payload `value` for mechanism 5
  uint32_t hash_a, hash_b;  // payload `local_hash` (a, b; bucket in `value`) for 8, 9
  uint8_t bits[64];         // payload `bits` for 3 and 4; `bloom` bits for 10 (cohort in `value`)
  size_t bit_bytes;
};

struct KatBatch {
  char name[48];
  uint32_t sdk_version;
  uint64_t device_nonce;
  KatReport reports[8];
  size_t report_count;
  uint8_t encoding[512];
  size_t encoding_size;
};

inline int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Parses one vector line; returns false for comments, blank or bad lines.
inline bool parse_kat_line(const char* line, size_t length, KatBatch* out) {
  char buffer[2048];
  if (length == 0 || length >= sizeof buffer || line[0] == '#') return false;
  memcpy(buffer, line, length);
  buffer[length] = '\0';
  char* fields[5];
  size_t n = 0;
  for (char* token = strtok(buffer, " "); token != nullptr && n < 5; token = strtok(nullptr, " ")) {
    fields[n++] = token;
  }
  if (n != 5) return false;
  *out = KatBatch{};
  strncpy(out->name, fields[0], sizeof out->name - 1);
  out->sdk_version = static_cast<uint32_t>(strtoul(fields[1], nullptr, 0));
  out->device_nonce = strtoull(fields[2], nullptr, 0);
  char* report = fields[3];
  while (report != nullptr && *report != '\0' && out->report_count < 8) {
    KatReport& r = out->reports[out->report_count++];
    char* end = nullptr;
    r.report_id = strtoull(report, &end, 0);
    r.metric_id = static_cast<uint32_t>(strtoul(end + 1, &end, 0));
    r.mechanism = static_cast<uint32_t>(strtoul(end + 1, &end, 0));
    r.epsilon_micros = static_cast<uint32_t>(strtoul(end + 1, &end, 0));
    r.domain_size = static_cast<uint32_t>(strtoul(end + 1, &end, 0));
    if (r.mechanism == 10) {  // cohort/hex bytes
      r.value = static_cast<uint32_t>(strtoul(end + 1, &end, 0));
    }
    if (r.mechanism == 3 || r.mechanism == 4 || r.mechanism == 10) {  // hex bytes
      ++end;
      while (hex_digit(end[0]) >= 0 && hex_digit(end[1]) >= 0 && r.bit_bytes < sizeof r.bits) {
        r.bits[r.bit_bytes++] = static_cast<uint8_t>(hex_digit(end[0]) << 4 | hex_digit(end[1]));
        end += 2;
      }
    } else if (r.mechanism == 8 || r.mechanism == 9) {
      r.hash_a = static_cast<uint32_t>(strtoul(end + 1, &end, 0));
      r.hash_b = static_cast<uint32_t>(strtoul(end + 1, &end, 0));
      r.value = static_cast<uint32_t>(strtoul(end + 1, &end, 0));
    } else if (r.mechanism == 5) {
      r.number = strtoll(end + 1, &end, 0);
    } else {
      r.value = static_cast<uint32_t>(strtoul(end + 1, &end, 0));
    }
    report = (*end == ',') ? end + 1 : nullptr;
  }
  const size_t hex_length = strlen(fields[4]);
  if (hex_length % 2 != 0 || hex_length / 2 > sizeof out->encoding) return false;
  for (size_t i = 0; i < hex_length / 2; ++i) {
    const int hi = hex_digit(fields[4][2 * i]);
    const int lo = hex_digit(fields[4][2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->encoding[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  out->encoding_size = hex_length / 2;
  return true;
}

// Calls visit(const KatBatch&) for every vector in `text`; returns the count.
template <typename Visit>
size_t for_each_kat(const char* text, Visit visit) {
  size_t count = 0;
  static KatBatch batch;  // large: keep it off the (small) device stack
  while (*text != '\0') {
    const char* end = strchr(text, '\n');
    const size_t length = end != nullptr ? static_cast<size_t>(end - text) : strlen(text);
    if (parse_kat_line(text, length, &batch)) {
      visit(batch);
      ++count;
    }
    text += length + (end != nullptr ? 1 : 0);
  }
  return count;
}

// The bytes of the vector `name` in a "name hex" file (comments: '#');
// returns their count, 0 if there is no such vector or it does not fit.
inline size_t named_hex_vector(const char* text, const char* name, uint8_t* out, size_t capacity) {
  const size_t name_length = strlen(name);
  while (*text != '\0') {
    const char* end = strchr(text, '\n');
    const size_t length = end != nullptr ? static_cast<size_t>(end - text) : strlen(text);
    if (length > name_length + 1 && text[0] != '#' && strncmp(text, name, name_length) == 0 &&
        text[name_length] == ' ') {
      const char* hex = text + name_length + 1;
      const size_t digits = length - name_length - 1;
      if (digits % 2 != 0 || digits / 2 > capacity) return 0;
      for (size_t i = 0; i < digits / 2; ++i) {
        const int hi = hex_digit(hex[2 * i]);
        const int lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) return 0;
        out[i] = static_cast<uint8_t>(hi << 4 | lo);
      }
      return digits / 2;
    }
    text += length + (end != nullptr ? 1 : 0);
  }
  return 0;
}

}  // namespace blur_test

#endif  // BLUR_TESTS_KAT_H
