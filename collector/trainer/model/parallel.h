// How the trainer uses the machine's cores: its own worker threads, each
// running single-threaded GEMMs (OpenBLAS, through Eigen's EIGEN_USE_BLAS,
// with kernels chosen for the CPU at run time).
//
// Why not OpenBLAS's threads: a training step is many GEMMs of very
// different sizes (per-time-step recurrent products of 512 x 128 x 32,
// per-example 20 x 20 Gram matrices, 5000 x 128 x 640 output layers) with
// elementwise work between them (softmax, gates, norms, noise). Splitting
// the batch over cores parallelizes all of it; threading each GEMM would
// leave the rest on one core while OpenBLAS's idle threads spin.
//
// Reproducibility: a result is bit-identical for a given seed on the same
// machine with the same worker count. A batch is split into one share per
// worker, and the shares' sums are added in a fixed order; another worker
// count (or another CPU, whose OpenBLAS kernel may round differently)
// changes the last bits, and so the run.
#ifndef BLUR_TRAINER_MODEL_PARALLEL_H
#define BLUR_TRAINER_MODEL_PARALLEL_H

#include <cstddef>
#include <functional>
#include <string>

namespace blur::trainer {

// 0 restores the default: one per core.
void set_worker_threads(size_t threads);
size_t worker_threads();

// Runs body(begin, end) over [0, n) split into min(n, worker_threads())
// contiguous shares, one per thread; rethrows the first exception. OpenBLAS
// runs single-threaded inside (this library holds it to one thread when it
// loads).
void parallel_items(size_t n, const std::function<void(size_t, size_t)>& body);

// For summaries and benchmark output, e.g. "OpenBLAS 0.3.21 (Haswell)".
std::string gemm_backend();

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_MODEL_PARALLEL_H
