// LEB128 varints (as protobuf), for the collector's compact stored forms.
#ifndef BLUR_COLLECTOR_UTIL_VARINT_H
#define BLUR_COLLECTOR_UTIL_VARINT_H

#include <cstdint>
#include <string>
#include <string_view>

namespace blur::collector {

inline void put_varint(std::string* out, uint64_t value) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

inline uint64_t zigzag(int64_t value) {
  return (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
}
inline int64_t unzigzag(uint64_t value) {
  return static_cast<int64_t>(value >> 1) ^ -static_cast<int64_t>(value & 1);
}

// Reads untrusted bytes: false on truncation or an over-long encoding.
class VarintReader {
 public:
  explicit VarintReader(std::string_view bytes) : bytes_(bytes) {}
  bool next(uint64_t* value) {
    uint64_t result = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (at_ == bytes_.size()) return false;
      const uint8_t byte = static_cast<uint8_t>(bytes_[at_++]);
      if (shift == 63 && byte > 1) return false;  // past 64 bits
      result |= uint64_t{byte & 0x7Fu} << shift;
      if ((byte & 0x80) == 0) {
        *value = result;
        return true;
      }
    }
    return false;
  }
  std::string_view rest() const { return bytes_.substr(at_); }
  void skip(size_t n) { at_ += n; }
  bool done() const { return at_ == bytes_.size(); }

 private:
  std::string_view bytes_;
  size_t at_ = 0;
};

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_UTIL_VARINT_H
