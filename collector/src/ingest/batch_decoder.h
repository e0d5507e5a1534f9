// Decodes untrusted bytes into a Batch with nanopb and the same schema the
// device encodes with (sdk/proto/blur.proto). Bounded: the nanopb struct
// has fixed-size arrays, so no input can make the decoder allocate more
// than one ReportBatch; the fuzzer in tests/fuzz exercises it.
#ifndef BLUR_COLLECTOR_INGEST_BATCH_DECODER_H
#define BLUR_COLLECTOR_INGEST_BATCH_DECODER_H

#include <cstddef>
#include <cstdint>
#include <string>

#include "ingest/batch.h"

namespace blur::collector {

// The largest encoding of a valid batch (nanopb's blur_ReportBatch_size).
size_t max_encoded_batch_size();

// Returns true and fills *batch, or returns false with a message in *error
// ("truncated or malformed protobuf: ..."). Never touches *batch on error.
bool decode_batch(const uint8_t* data, size_t size, Batch* batch, std::string* error);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_INGEST_BATCH_DECODER_H
