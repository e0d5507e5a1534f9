// Compiled by sdk.config.refuses_mechanism_without_builder with a mechanism
// table of one more line than the SDK has builders for: the dispatch
// (any_mechanism.h, which the Client, the simulator and the flash-cost probe
// use) must refuse it by name instead of leaving the mechanism out.
#include "blur/mechanisms/any_mechanism.h"
