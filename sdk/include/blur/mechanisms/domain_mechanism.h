// The common part of mechanisms configured by (epsilon, domain size): the
// validating builder and the two accessors make_report() needs. A mechanism
// derives from DomainMechanism<Itself, its MechanismId> and adds
// randomize(); its id, payload kind and largest domain come from the
// mechanism table (mechanism_table.h).
#ifndef BLUR_DOMAIN_MECHANISM_H
#define BLUR_DOMAIN_MECHANISM_H

#include <stdint.h>

#include "blur/epsilon.h"
#include "blur/mechanisms/mechanism.h"
#include "blur/result.h"

namespace blur {

// The one rule for a mechanism's configuration: 0 < epsilon_micros <=
// kMaxReportEpsilonMicros and 2 <= domain_size <= max_domain_size.
inline constexpr bool valid_mechanism_config(EpsilonMicros epsilon_micros, uint32_t domain_size,
                                             uint32_t max_domain_size) {
  return epsilon_micros != 0 && epsilon_micros <= kMaxReportEpsilonMicros && domain_size >= 2 &&
         domain_size <= max_domain_size;
}

template <typename Mechanism, MechanismId kId>
class DomainMechanism {
 public:
  static constexpr uint32_t kMaxDomainSize = mechanism_max_domain(kId);
  static constexpr PayloadKind kPayload = mechanism_payload(kId);
  MechanismId id() const { return kId; }

  // 0 < epsilon_micros <= kMaxReportEpsilonMicros and
  // 2 <= domain_size <= kMaxDomainSize, else kInvalidArgument.
  static Result<Mechanism> create(EpsilonMicros epsilon_micros, uint32_t domain_size) {
    if (!valid_mechanism_config(epsilon_micros, domain_size, kMaxDomainSize)) {
      return Status::kInvalidArgument;
    }
    return Mechanism(epsilon_micros, domain_size);
  }

  uint32_t domain_size() const { return domain_size_; }
  // The epsilon one report realizes, rounded up to micro-nats (exact for
  // every mechanism built on the exact samplers).
  EpsilonMicros epsilon_charged() const { return epsilon_micros_; }

 protected:
  DomainMechanism(EpsilonMicros epsilon_micros, uint32_t domain_size)
      : epsilon_micros_(epsilon_micros), domain_size_(domain_size) {}
  EpsilonMicros epsilon_micros_;
  uint32_t domain_size_;
};

}  // namespace blur

#endif  // BLUR_DOMAIN_MECHANISM_H
