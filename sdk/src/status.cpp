#include "blur/status.h"

#include <string.h>

namespace blur {

namespace {
// The names in enum order, each ended by '\0': one table, no pointer array
// (firmware pays for the characters only).
constexpr char kNames[] =
    "ok\0"
    "invalid argument\0"
    "buffer too small\0"
    "entropy failure\0"
    "storage failure\0"
    "storage corrupt\0"
    "not provisioned\0"
    "already provisioned\0"
    "lifetime budget exhausted\0"
    "ledger closed\0"
    "sampler iteration cap\0"
    "encoding failure\0"
    "crypto failure\0"
    "window budget exhausted\0"
    "metric budget exhausted\0"
    "clock failure\0"
    "storage rolled back\0"
    "report queue full\0"
    "memo table full\0"
    "transport failure\0"
    "not in this build\0"
    "storage worn out\0"
    "storage incompatible\0"
    "partitions overlap\0"
    "metric reconfigured\0";
}  // namespace

const char* status_name(Status status) {
  if (status > kLastStatus) return "unknown status";
  const char* name = kNames;
  for (unsigned i = 0; i < static_cast<unsigned>(status); ++i) name += strlen(name) + 1;
  return name;
}

}  // namespace blur
