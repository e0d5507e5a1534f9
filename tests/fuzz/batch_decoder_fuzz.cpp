// libFuzzer: the collector's trust boundary. Any bytes must decode to a
// batch or to an error message, never crash, overflow or leak; a decoded
// batch must respect the schema's bounds and pass through validation. The
// device-nonce look before decoding (device_nonce_offset) stays inside the
// input.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "ingest/batch_decoder.h"
#include "ingest/batch_validator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace blur::collector;
  // The look before decoding: inside the input, and the nonce decoded when
  // the input holds one field 2 only and decodes.
  const size_t offset = device_nonce_offset(data, size);
  if (offset != 0 && offset + 8 > size) __builtin_trap();
  const std::optional<uint64_t> leading = leading_device_nonce(data, size);
  if (leading.has_value() != (offset != 0)) __builtin_trap();
  Batch batch;
  std::string error;
  if (!decode_batch(data, size, &batch, &error)) {
    if (error.empty()) __builtin_trap();  // every refusal must say why
    return 0;
  }
  if (batch.reports.size() > 64) __builtin_trap();
  const std::string problem = validate_batch(batch, [](uint32_t id) -> std::optional<MetricConfig> {
    if (id != 1) return std::nullopt;
    return MetricConfig{1, MechanismId::kBinaryRandomizedResponse, 1000000};
  });
  (void)problem;
  return 0;
}
