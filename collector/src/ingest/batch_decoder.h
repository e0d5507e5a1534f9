// Decodes untrusted bytes into a Batch with nanopb and the same schema the
// device encodes with (sdk/proto/blur.proto). Bounded: the nanopb struct
// has fixed-size arrays, so no input can make the decoder allocate more
// than one ReportBatch; the fuzzer in tests/fuzz exercises it.
#ifndef BLUR_COLLECTOR_INGEST_BATCH_DECODER_H
#define BLUR_COLLECTOR_INGEST_BATCH_DECODER_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "model/incoming_report.h"

namespace blur::collector {

// The largest encoding of a valid batch (nanopb's blur_ReportBatch_size).
size_t max_encoded_batch_size();

// Returns true and fills *batch, or returns false with a message in *error
// ("truncated or malformed protobuf: ..."). Never touches *batch on error.
bool decode_batch(const uint8_t* data, size_t size, Batch* batch, std::string* error);

// The offset of the 8 little-endian device-nonce bytes in a batch encoded
// as the SDK writes it (field 1, sdk_version, a varint if not zero; then
// field 2, device_nonce, fixed64), or 0 if `data` does not start that way.
// Not a decoding: a later field 2 would win in decode_batch(). For looking
// before decoding (refusing a busy device early) and for tools that write
// a nonce into an encoded batch.
size_t device_nonce_offset(const uint8_t* data, size_t size);
// The nonce at device_nonce_offset(), if there is one.
std::optional<uint64_t> leading_device_nonce(const uint8_t* data, size_t size);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_INGEST_BATCH_DECODER_H
