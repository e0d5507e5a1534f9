// Mechanism identifiers and their properties, all from the one table
// (mechanism_table.h). Values equal blur.proto's Mechanism enum.
#ifndef BLUR_MECHANISM_H
#define BLUR_MECHANISM_H

#include <stdint.h>

#include "blur/compat/std_facilities.h"

#include "blur/config.h"
#include "blur/mechanisms/mechanism_table.h"

namespace blur {

enum class MechanismId : uint8_t {
#define BLUR_X(id, Cpp, name, C, PROTO, Payload, max_domain) k##Cpp = id,
  BLUR_MECHANISM_TABLE(BLUR_X)
#undef BLUR_X
};

// Which Report field a mechanism's output travels in (blur.proto's payload
// oneof): a bit, an index, a bit vector, a signed number, a local-hash
// (seed, bucket), a Bloom filter with its cohort.
enum class PayloadKind : uint8_t { kBit, kIndex, kBits, kNumber, kLocalHash, kBloom };

inline constexpr uint32_t kMechanismCount = 0
#define BLUR_X(id, Cpp, name, C, PROTO, Payload, max_domain) +1
    BLUR_MECHANISM_TABLE(BLUR_X)
#undef BLUR_X
    ;

// False for a wire value that names no mechanism of this SDK.
constexpr bool is_mechanism(uint32_t id) {
  switch (id) {
#define BLUR_X(id, Cpp, name, C, PROTO, Payload, max_domain) case id:
    BLUR_MECHANISM_TABLE(BLUR_X)
#undef BLUR_X
    return true;
    default:
      return false;
  }
}

constexpr PayloadKind mechanism_payload(MechanismId id) {
  switch (id) {
#define BLUR_X(id, Cpp, name, C, PROTO, Payload, max_domain) \
  case MechanismId::k##Cpp:                                 \
    return PayloadKind::k##Payload;
    BLUR_MECHANISM_TABLE(BLUR_X)
#undef BLUR_X
  }
  return PayloadKind::kBit;
}

// The largest domain size the device accepts (the smallest is 2).
constexpr uint32_t mechanism_max_domain(MechanismId id) {
  switch (id) {
#define BLUR_X(id, Cpp, name, C, PROTO, Payload, max_domain) \
  case MechanismId::k##Cpp:                                 \
    return max_domain;
    BLUR_MECHANISM_TABLE(BLUR_X)
#undef BLUR_X
  }
  return 0;
}

// "rr", "grr", ...: the names of CLIs, configuration files and CMake.
constexpr const char* mechanism_name(MechanismId id) {
  switch (id) {
#define BLUR_X(id, Cpp, name, C, PROTO, Payload, max_domain) \
  case MechanismId::k##Cpp:                                 \
    return #name;
    BLUR_MECHANISM_TABLE(BLUR_X)
#undef BLUR_X
  }
  return "unknown";
}

// The mechanisms a Client build compiles in (config.h's BLUR_MECHANISM_SET,
// bit i for MechanismId i; set by CMake's blur_client_library(<target>
// MECHANISMS ...)): firmware leaves the others out of its flash (add_metric
// then answers kNotBuilt). Default: all.
constexpr bool mechanism_built(MechanismId id) {
  return ((BLUR_MECHANISM_SET >> static_cast<unsigned>(id)) & 1u) != 0;
}
// Which payload forms a set of mechanisms puts on the wire, as a mask: bit
// k for PayloadKind k, and kFragmentPuzzleWire for sfp's own message. The
// report encoder a Client links converts only these (report_wire.h).
inline constexpr uint32_t kFragmentPuzzleWire = 1u << 6;
constexpr uint32_t built_wire_forms() {
  uint32_t forms = 0;
#define BLUR_X(id, Cpp, name, C, PROTO, Payload, max_domain)                    \
  if (mechanism_built(MechanismId::k##Cpp)) {                                   \
    forms |= 1u << static_cast<unsigned>(PayloadKind::k##Payload);              \
    if (MechanismId::k##Cpp == MechanismId::kSequenceFragmentPuzzle) {          \
      forms |= kFragmentPuzzleWire;                                             \
    }                                                                           \
  }
  BLUR_MECHANISM_TABLE(BLUR_X)
#undef BLUR_X
  return forms;
}

// What a mechanism randomizes: an index into its domain (uint32_t) unless it
// declares `using Value = ...` (the discovery mechanisms take a Word).
template <typename Mechanism, typename = void>
struct MechanismValue {
  using type = uint32_t;
};
template <typename Mechanism>
struct MechanismValue<Mechanism, std::void_t<typename Mechanism::Value>> {
  using type = typename Mechanism::Value;
};
template <typename Mechanism>
using MechanismValueT = typename MechanismValue<Mechanism>::type;

// Whether a mechanism type is a memoized form (memoized.h, memoized_mean.h,
// loloha.h): it has the permanent response's epsilon, longitudinal_epsilon()
// (and the MemoKey of its permanent streams, key()).
template <typename Mechanism, typename = void>
struct IsMemoized : std::false_type {};
template <typename Mechanism>
struct IsMemoized<Mechanism, std::void_t<decltype(std::declval<const Mechanism&>().longitudinal_epsilon())>>
    : std::true_type {};

inline constexpr bool kMemoizationBuilt = BLUR_MEMOIZATION != 0;

// Whether the Client stamps each report with the port clock's minute
// (Report.observed_minute): config.h's BLUR_OBSERVED_TIME.
inline constexpr bool kObservedTimeBuilt = BLUR_OBSERVED_TIME != 0;

}  // namespace blur

#endif  // BLUR_MECHANISM_H
