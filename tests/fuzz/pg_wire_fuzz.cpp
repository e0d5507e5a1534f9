// libFuzzer: PostgreSQL's binary wire format as the collector writes and
// reads it (store/postgres/pg_wire.h, and pg_session.h's field readers):
// the big-endian integers, the one-dimensional binary arrays the backend
// sends (int8[], int2[], bytea[]), and the binary result fields the
// database server sends back (a corrupt or hostile server, or a schema
// changed under the collector).
//
// The input is read in turn as integers, as the elements of an array, and
// as the cells of up to 8 libpq results built with PQmakeEmptyPGresult and
// PQsetvalue (the real PGresult, without a server). Properties:
//   - get_int16/32/64 are the big-endian two's-complement value (a
//     reference fold), and put_* writes back the same bytes;
//   - an ArrayWriter's bytes decode, by a reference decoder written from
//     PostgreSQL's array_recv (ndim 1, no NULL bitmap, element type, size,
//     lower bound 1, then length-prefixed elements), to exactly the
//     elements added, with nothing left over;
//   - field_int64 / field_int16 read a cell of exactly 8 / 2 bytes as its
//     value and anything else (another width, NULL, a column or row the
//     result does not have) as 0; field_float8 is field_int64's bits;
//     field_bytes is the cell's bytes, embedded NULs included, and "" past
//     the end; field_null is exactly the NULL cells and those past the end
//     (libpq's "pretend it is null"); rows() is the row count.
#include <libpq-fe.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "store/postgres/pg_session.h"
#include "store/postgres/pg_wire.h"

namespace {

namespace pg = blur::collector::store::pg;

// The input, consumed from the front; zeros once it runs out.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  std::string bytes(size_t n) {
    std::string out;
    for (size_t i = 0; i < n; ++i) out.push_back(static_cast<char>(byte()));
    return out;
  }
  bool done() const { return at_ >= size_; }

 private:
  const uint8_t* data_;
  size_t size_, at_ = 0;
};

uint64_t reference_be(const std::string& bytes) {
  uint64_t value = 0;
  for (unsigned char c : bytes) value = value * 256 + c;
  return value;
}

void check_integers(Input& in) {
  const std::string b = in.bytes(8);
  const uint64_t v64 = reference_be(b), v32 = reference_be(b.substr(0, 4)),
                 v16 = reference_be(b.substr(0, 2));
  if (static_cast<uint64_t>(pg::get_int64(b.data())) != v64 ||
      static_cast<uint32_t>(pg::get_int32(b.data())) != v32 ||
      static_cast<uint16_t>(pg::get_int16(b.data())) != v16) {
    __builtin_trap();
  }
  std::string out;
  pg::put_int64(out, pg::get_int64(b.data()));
  pg::put_int32(out, pg::get_int32(b.data()));
  pg::put_int16(out, pg::get_int16(b.data()));
  if (out != b + b.substr(0, 4) + b.substr(0, 2)) __builtin_trap();
}

// array_recv's reading of a one-dimensional array: each element as its
// bytes. Returns false where array_recv would refuse it.
bool reference_decode(const std::string& a, unsigned element_oid,
                      std::vector<std::string>* elements) {
  size_t at = 0;
  auto int32 = [&](int32_t* out) {
    if (a.size() - at < 4) return false;
    *out = static_cast<int32_t>(reference_be(a.substr(at, 4)));
    at += 4;
    return true;
  };
  int32_t ndim, flags, oid, count, lower;
  if (!int32(&ndim) || !int32(&flags) || !int32(&oid) || ndim != 1 || flags != 0 ||
      static_cast<unsigned>(oid) != element_oid || !int32(&count) || !int32(&lower) ||
      count < 0 || lower != 1) {
    return false;
  }
  for (int32_t i = 0; i < count; ++i) {
    int32_t length;
    if (!int32(&length) || length < 0 || a.size() - at < static_cast<size_t>(length)) return false;
    elements->push_back(a.substr(at, static_cast<size_t>(length)));
    at += static_cast<size_t>(length);
  }
  return at == a.size();
}

void check_array(Input& in) {
  static const unsigned kOids[] = {pg::kInt8Oid, pg::kInt2Oid, pg::kByteaOid};
  const unsigned oid = kOids[in.byte() % 3];
  const size_t count = in.byte() % 16;
  std::vector<std::string> added;  // each element's binary form
  std::vector<std::string> bytes_values;
  std::vector<int64_t> values;
  for (size_t i = 0; i < count; ++i) {
    if (oid == pg::kByteaOid) {
      bytes_values.push_back(in.bytes(in.byte() % 24));
      added.push_back(bytes_values.back());
    } else {
      const std::string b = in.bytes(oid == pg::kInt8Oid ? 8 : 2);
      values.push_back(oid == pg::kInt8Oid ? pg::get_int64(b.data()) : pg::get_int16(b.data()));
      added.push_back(b);
    }
  }
  pg::ArrayWriter writer(oid, count);
  for (size_t i = 0; i < count; ++i) {
    if (oid == pg::kByteaOid) {
      writer.add_bytes(bytes_values[i]);
    } else if (oid == pg::kInt8Oid) {
      writer.add_int64(values[i]);
    } else {
      writer.add_int16(static_cast<int16_t>(values[i]));
    }
  }
  std::vector<std::string> decoded;
  if (!reference_decode(writer.bytes(), oid, &decoded) || decoded != added) __builtin_trap();
}

void check_result(Input& in) {
  const int columns = 1 + in.byte() % 12, row_count = in.byte() % 4;
  PGresult* result = PQmakeEmptyPGresult(nullptr, PGRES_TUPLES_OK);
  if (result == nullptr) return;  // out of memory
  std::vector<PGresAttDesc> descs(static_cast<size_t>(columns));
  std::vector<std::string> names(static_cast<size_t>(columns));
  for (int c = 0; c < columns; ++c) {
    names[c] = "c" + std::to_string(c);
    descs[c] = PGresAttDesc{};
    descs[c].name = names[c].data();
    descs[c].format = 1;  // binary
    descs[c].typlen = -1;
    descs[c].atttypmod = -1;
  }
  if (PQsetResultAttrs(result, columns, descs.data()) == 0) __builtin_trap();
  // cells[row][column]: the bytes, or absent for NULL.
  std::vector<std::vector<std::pair<bool, std::string>>> cells(static_cast<size_t>(row_count));
  for (int r = 0; r < row_count; ++r) {
    for (int c = 0; c < columns; ++c) {
      const uint8_t shape = in.byte();
      const bool null = shape == 255;
      // Widths 0..16 (2 and 8 are the integers'), so both readers see
      // their own width and every other.
      std::string value = null ? std::string() : in.bytes(shape % 17);
      cells[r].push_back({null, value});
      if (PQsetvalue(result, r, c, null ? nullptr : value.data(),
                     null ? -1 : static_cast<int>(value.size())) == 0) {
        __builtin_trap();
      }
    }
  }
  if (pg::rows(result) != row_count) __builtin_trap();
  for (int r = 0; r < row_count + 1; ++r) {
    for (int c = 0; c < 12; ++c) {
      const bool present = r < row_count && c < columns;
      const bool null = !present || cells[r][c].first;  // libpq: past the end is NULL
      const std::string value = present ? cells[r][c].second : std::string();
      if (pg::field_null(result, r, c) != null) __builtin_trap();
      if (pg::field_bytes(result, r, c) != value) __builtin_trap();
      const int64_t i64 = pg::field_int64(result, r, c);
      if (i64 != (value.size() == 8 ? static_cast<int64_t>(reference_be(value)) : 0)) {
        __builtin_trap();
      }
      const int16_t i16 = pg::field_int16(result, r, c);
      if (i16 != (value.size() == 2 ? static_cast<int16_t>(reference_be(value)) : 0)) {
        __builtin_trap();
      }
      const double f = pg::field_float8(result, r, c);
      int64_t bits;
      std::memcpy(&bits, &f, sizeof bits);
      if (bits != i64) __builtin_trap();
    }
  }
  PQclear(result);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  check_integers(in);
  check_array(in);
  // A few results per input: a long input (the shared batch seeds are up
  // to 40 KB) would otherwise spend its time building thousands of them.
  for (int i = 0; i < 8 && !in.done(); ++i) check_result(in);
  return 0;
}
