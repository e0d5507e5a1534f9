#include "store/postgres/pg_wire.h"

namespace blur::collector::store::pg {
namespace {

void put_be(std::string& out, uint64_t value, int bytes) {
  for (int shift = (bytes - 1) * 8; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

uint64_t get_be(const char* data, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) {
    value = (value << 8) | static_cast<unsigned char>(data[i]);
  }
  return value;
}

}  // namespace

void put_int16(std::string& out, int16_t value) { put_be(out, static_cast<uint16_t>(value), 2); }
void put_int32(std::string& out, int32_t value) { put_be(out, static_cast<uint32_t>(value), 4); }
void put_int64(std::string& out, int64_t value) { put_be(out, static_cast<uint64_t>(value), 8); }
int16_t get_int16(const char* data) { return static_cast<int16_t>(get_be(data, 2)); }
int32_t get_int32(const char* data) { return static_cast<int32_t>(get_be(data, 4)); }
int64_t get_int64(const char* data) { return static_cast<int64_t>(get_be(data, 8)); }

ArrayWriter::ArrayWriter(unsigned element_oid, size_t count) {
  // ndim, has-nulls flag, element type, then per dimension: size, lower bound.
  put_int32(out_, 1);
  put_int32(out_, 0);
  put_int32(out_, static_cast<int32_t>(element_oid));
  put_int32(out_, static_cast<int32_t>(count));
  put_int32(out_, 1);
}

void ArrayWriter::add_int16(int16_t value) {
  put_int32(out_, 2);
  put_int16(out_, value);
}

void ArrayWriter::add_int64(int64_t value) {
  put_int32(out_, 8);
  put_int64(out_, value);
}

void ArrayWriter::add_bytes(const std::string& bytes) {
  put_int32(out_, static_cast<int32_t>(bytes.size()));
  out_.append(bytes);
}

}  // namespace blur::collector::store::pg
