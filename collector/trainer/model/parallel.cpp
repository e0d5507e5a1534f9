#include "trainer/model/parallel.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>
#include <vector>

#include "trainer/random/run_in_shares.h"

// OpenBLAS's pthread build starts its thread pool when the library is
// loaded, before main(): threads that block no signal. A process that
// handles SIGTERM by blocking it and waiting in sigwait (blur-collector
// serve, when it still linked the trainer) would then have the signal
// delivered to one of them and die on its default action. The trainer
// never uses that pool (one GEMM thread per worker), so the first thing
// this library does is hold OpenBLAS to one thread and stop the pool
// (library constructors run after those of the libraries they depend on).
extern "C" int blas_thread_shutdown_(void);

namespace blur::trainer {

namespace {
std::atomic<size_t> configured_threads{0};

[[maybe_unused]] const bool kBlasPoolStopped = [] {
  openblas_set_num_threads(1);
  blas_thread_shutdown_();
  return true;
}();
}  // namespace

void set_worker_threads(size_t threads) { configured_threads = threads; }

size_t worker_threads() {
  const size_t configured = configured_threads;
  if (configured > 0) return configured;
  return std::max(1u, std::thread::hardware_concurrency());
}

void parallel_items(size_t n, const std::function<void(size_t, size_t)>& body) {
  run_in_shares(n, worker_threads(), body);
}

std::string gemm_backend() {
  const char* core = openblas_get_corename();
  std::string version = OPENBLAS_VERSION;  // " OpenBLAS 0.3.21 "
  version.erase(0, version.find_first_not_of(' '));
  version.erase(version.find_last_not_of(' ') + 1);
  return version + " (" + (core != nullptr ? core : "unknown") + ")";
}

}  // namespace blur::trainer
