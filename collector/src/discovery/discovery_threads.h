// The decoders' threads: up to 8, one per core, each given its index.
#ifndef BLUR_COLLECTOR_DISCOVERY_DISCOVERY_THREADS_H
#define BLUR_COLLECTOR_DISCOVERY_DISCOVERY_THREADS_H

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace blur::collector {

inline unsigned discovery_threads() {
  return std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
}

// work(t) for t in [0, threads), this thread running t = 0.
template <typename Work>
void run_threads(unsigned threads, const Work& work) {
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back([&work, t] { work(t); });
  work(0u);
  for (auto& thread : pool) thread.join();
}

// work(i) for i in [0, items), strided over discovery_threads().
template <typename Work>
void for_each_item(size_t items, const Work& work) {
  const unsigned threads = discovery_threads();
  run_threads(threads, [&](unsigned t) {
    for (size_t i = t; i < items; i += threads) work(i);
  });
}

}  // namespace blur::collector

#endif  // BLUR_COLLECTOR_DISCOVERY_DISCOVERY_THREADS_H
