// Local hashing (olh, blh, loloha): the shape of a metric's hash family.
#ifndef BLUR_COLLECTOR_MECHANISMS_LOCAL_HASHING_H
#define BLUR_COLLECTOR_MECHANISMS_LOCAL_HASHING_H

#include "blur/mechanisms/local_hashing.h"
#include "model/metric_config.h"

namespace blur::collector {

// The field and bucket sizes of the metric's hash family, computed by the
// SDK's own rule (blur::LocalHashing::shape).
blur::LocalHashShape local_hash_shape(const MetricConfig& metric);

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_MECHANISMS_LOCAL_HASHING_H
