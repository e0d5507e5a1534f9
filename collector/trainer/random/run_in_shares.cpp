#include "trainer/random/run_in_shares.h"

#include <algorithm>
#include <exception>
#include <thread>
#include <vector>

namespace blur::trainer {

void run_in_shares(size_t n, size_t threads, const std::function<void(size_t, size_t)>& body) {
  threads = std::min(threads, n);
  if (threads <= 1) {
    if (n > 0) body(0, n);
    return;
  }
  std::vector<std::exception_ptr> errors(threads);
  const size_t share = (n + threads - 1) / threads;
  auto run = [&](size_t t) {
    try {
      const size_t begin = std::min(n, share * t), end = std::min(n, share * (t + 1));
      if (begin < end) body(begin, end);
    } catch (...) {
      errors[t] = std::current_exception();
    }
  };
  std::vector<std::thread> workers;
  for (size_t t = 1; t < threads; ++t) workers.emplace_back(run, t);
  run(0);
  for (std::thread& w : workers) w.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace blur::trainer
