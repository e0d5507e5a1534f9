// JSON text written straight into a string, for the large answers (an
// estimate of 4096 values, a 30-day series of them): no tree of nodes, no
// allocation per value. Strings are escaped and bytes that are not UTF-8
// come out as U+FFFD, so untrusted text never breaks the document; numbers
// are written in their shortest round-trip form (non-finite ones as null,
// as nlohmann's dump does).
//
// json_text() is the one way a nlohmann value becomes text: it never throws.
#ifndef BLUR_COLLECTOR_UTIL_JSON_WRITER_H
#define BLUR_COLLECTOR_UTIL_JSON_WRITER_H

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace blur::collector {

std::string json_text(const nlohmann::json& value) noexcept;

// `text` with every byte that is not part of well-formed UTF-8 replaced by
// U+FFFD, as JsonWriter writes strings (for text formats other than JSON).
std::string well_formed_utf8(std::string_view text);

// A number as JsonWriter writes it (shortest round-trip form; null if not
// finite) at `at`, which has room for kJsonNumberBytes; returns its end.
inline constexpr size_t kJsonNumberBytes = 32;
char* put_json_number(char* at, double number);
char* put_json_number(char* at, uint64_t number);

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  // The name of the next member of the current object.
  JsonWriter& key(std::string_view name);

  JsonWriter& value(double number);
  JsonWriter& value(int64_t number);
  JsonWriter& value(uint64_t number);
  JsonWriter& value(uint32_t number) { return value(uint64_t{number}); }
  JsonWriter& value(bool flag);
  JsonWriter& value(std::string_view text);
  JsonWriter& value(const char* text) { return value(std::string_view(text)); }
  // An already encoded JSON value, written as it is.
  JsonWriter& raw(std::string_view json);

  // key(name).value(v)
  template <typename T>
  JsonWriter& member(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }

  // Room for `bytes` more bytes of text (a hint: a large answer then
  // grows without copying itself again and again; on Linux the first
  // megabytes of that room are mapped at once, instead of page by page
  // as the text reaches them).
  void reserve(size_t bytes);

  const std::string& text() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  void separate();

  std::string out_;
  // Per open container: whether the next element needs a comma.
  std::vector<bool> needs_comma_;
  bool after_key_ = false;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_UTIL_JSON_WRITER_H
