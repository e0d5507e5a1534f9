// PostgreSQL's binary wire format for the few types the backend sends and
// reads: int2/int4/int8 (big-endian two's complement), bytea (raw bytes), and
// one-dimensional arrays of them. Binary parameters skip the server's text
// parsing, and a bytea travels as itself rather than as hex text, which is
// most of what makes one INSERT ... unnest(...) of 1,000 reports cheap.
#ifndef BLUR_COLLECTOR_STORE_POSTGRES_PG_WIRE_H
#define BLUR_COLLECTOR_STORE_POSTGRES_PG_WIRE_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace blur::collector::store::pg {

// Type OIDs, fixed in PostgreSQL's catalog (pg_type.dat) since 7.x; the
// server headers that name them (catalog/pg_type_d.h) are not in libpq-dev.
inline constexpr unsigned kByteaOid = 17;
inline constexpr unsigned kInt8Oid = 20;
inline constexpr unsigned kInt2Oid = 21;
inline constexpr unsigned kInt4Oid = 23;
inline constexpr unsigned kTextOid = 25;
inline constexpr unsigned kByteaArrayOid = 1001;
inline constexpr unsigned kInt2ArrayOid = 1005;
inline constexpr unsigned kInt8ArrayOid = 1016;

void put_int16(std::string& out, int16_t value);
void put_int32(std::string& out, int32_t value);
void put_int64(std::string& out, int64_t value);
int16_t get_int16(const char* data);
int32_t get_int32(const char* data);
int64_t get_int64(const char* data);

// A one-dimensional array without NULLs in binary form: the header, then
// one (length, bytes) element per add().
class ArrayWriter {
 public:
  ArrayWriter(unsigned element_oid, size_t count);
  void add_int16(int16_t value);
  void add_int64(int64_t value);
  void add_bytes(const std::string& bytes);
  // The encoded array; valid while the writer lives and is not added to.
  const std::string& bytes() const { return out_; }

 private:
  std::string out_;
};

}  // namespace blur::collector::store::pg

#endif  // BLUR_COLLECTOR_STORE_POSTGRES_PG_WIRE_H
