#include "util/json_writer.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace blur::collector {

std::string json_text(const nlohmann::json& value) noexcept {
  try {
    return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (...) {
    // Out of memory, or a bug: still valid JSON.
    return R"({"error":"the answer could not be encoded"})";
  }
}

namespace {

// The length of the well-formed UTF-8 sequence at text[i] (RFC 3629: no
// overlong forms, no surrogates, nothing past U+10FFFF), or 0.
size_t utf8_sequence(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t lead = byte(i);
  size_t length = 0;
  uint8_t low = 0x80, high = 0xBF;  // the allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

// Printable ASCII other than '"' and '\\': written as it is.
bool plain(uint8_t c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

void put_string(std::string* out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (size_t i = 0; i < text.size();) {
    // A run of plain characters at once (names and most values are one).
    size_t run = i;
    while (run < text.size() && plain(static_cast<uint8_t>(text[run]))) ++run;
    if (run != i) {
      out->append(text.data() + i, run - i);
      i = run;
      continue;
    }
    const auto c = static_cast<uint8_t>(text[i]);
    if (c >= 0x80) {
      const size_t length = utf8_sequence(text, i);
      if (length == 0) {
        out->append("\xEF\xBF\xBD");  // U+FFFD for one invalid byte
        ++i;
      } else {
        out->append(text.substr(i, length));
        i += length;
      }
      continue;
    }
    ++i;
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      default:
        if (c < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 15]);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back('"');
}

}  // namespace

std::string well_formed_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t length = static_cast<uint8_t>(text[i]) < 0x80 ? 1 : utf8_sequence(text, i);
    if (length == 0) {
      out.append("\xEF\xBF\xBD");  // U+FFFD for one invalid byte
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

namespace {

template <typename Number>
void put_number(std::string* out, Number number) {
  char text[kJsonNumberBytes];
  out->append(text, put_json_number(text, number));
}

}  // namespace

char* put_json_number(char* at, double number) {
  if (!std::isfinite(number)) {
    std::memcpy(at, "null", 4);
    return at + 4;
  }
  return std::to_chars(at, at + kJsonNumberBytes, number).ptr;
}

char* put_json_number(char* at, uint64_t number) {
  return std::to_chars(at, at + kJsonNumberBytes, number).ptr;
}

namespace {

// Large answers: the pages the next `bytes` of text will fill (at most
// 8 MiB of them: a reservation is an upper bound) are mapped in one call
// instead of one page fault each (a 300 MB answer is 73,000 faults; on a
// virtual machine with costly faults, a second of them). Linux 5.14 and
// later; elsewhere, or if refused, the pages fault in as written.
void map_ahead(std::string& out, size_t bytes) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  constexpr size_t kWorthIt = size_t{1} << 20, kAtMost = size_t{8} << 20;
  if (bytes < kWorthIt) return;
  bytes = std::min(bytes, kAtMost);
  const auto page = static_cast<uintptr_t>(4096);
  const auto begin = reinterpret_cast<uintptr_t>(out.data() + out.size());
  const uintptr_t first = (begin + page - 1) & ~(page - 1);
  const uintptr_t last = (begin + bytes) & ~(page - 1);
  if (last > first) (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_POPULATE_WRITE);
#else
  (void)out;
  (void)bytes;
#endif
}

}  // namespace

void JsonWriter::reserve(size_t bytes) {
  out_.reserve(out_.size() + bytes);
  map_ahead(out_, bytes);
}

void JsonWriter::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!needs_comma_.empty()) {
    if (needs_comma_.back()) out_.push_back(',');
    needs_comma_.back() = true;
  }
}

JsonWriter& JsonWriter::begin_object() {
  separate();
  out_.push_back('{');
  needs_comma_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::end_object() {
  out_.push_back('}');
  needs_comma_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::begin_array() {
  separate();
  out_.push_back('[');
  needs_comma_.push_back(false);
  return *this;
}

JsonWriter& JsonWriter::end_array() {
  out_.push_back(']');
  needs_comma_.pop_back();
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view name) {
  separate();
  put_string(&out_, name);
  out_.push_back(':');
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(double number) {
  separate();
  put_number(&out_, number);
  return *this;
}

JsonWriter& JsonWriter::value(int64_t number) {
  separate();
  char text[kJsonNumberBytes];
  out_.append(text, std::to_chars(text, text + sizeof text, number).ptr);
  return *this;
}

JsonWriter& JsonWriter::value(uint64_t number) {
  separate();
  put_number(&out_, number);
  return *this;
}

JsonWriter& JsonWriter::value(bool flag) {
  separate();
  out_.append(flag ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view text) {
  separate();
  put_string(&out_, text);
  return *this;
}

JsonWriter& JsonWriter::raw(std::string_view json) {
  separate();
  out_.append(json);
  return *this;
}

}  // namespace blur::collector
