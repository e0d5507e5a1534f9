#include "options.h"

#include <sys/random.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "blur/discovery/word.h"

namespace blur::sim {

int fail(const std::string& message) {
  std::fprintf(stderr, "blur-device-sim: %s\n", message.c_str());
  return 2;
}

std::optional<collector::MetricConfig> metric_of(const Options& o, std::string* error) {
  auto metric = collector::parse_metric_spec(
      std::to_string(o.metric) + ":" + o.mechanism + ":" + o.epsilon + ":" +
      std::to_string(o.domain) + (o.longitudinal.empty() ? "" : ":longitudinal=" + o.longitudinal));
  if (!metric) {
    *error = metric.error().message;
    return std::nullopt;
  }
  return metric.value();
}

bool resolve_seed(Options* o, std::string* error) {
  if (!o->seed_given) {
    uint64_t seed = 0;
    ssize_t got = -1;
    do {
      got = getrandom(&seed, sizeof seed, 0);
    } while (got < 0 && errno == EINTR);
    if (got != static_cast<ssize_t>(sizeof seed)) {
      *error = std::string("getrandom: ") + (got < 0 ? std::strerror(errno) : "short read");
      return false;
    }
    o->seed = seed;
  }
  std::fprintf(stderr, "blur-device-sim: seed %llu%s\n", static_cast<unsigned long long>(o->seed),
               o->seed_given ? "" : " (fresh; --seed repeats this run)");
  return true;
}

// One word per line and device; a line that is not a word is an error
// naming it (the devices would refuse it: nothing is recorded).
bool load_words(const std::string& path, std::vector<std::string>* words, std::string* error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read " + path;
    return false;
  }
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (!Word::parse(line.data(), line.size()).ok()) {
      *error = path + ":" + std::to_string(number) + ": not a word of 1 to " +
               std::to_string(kMaxWordLength) + " characters from [a-z']";
      return false;
    }
    words->push_back(line);
  }
  if (words->empty()) {
    *error = path + " has no words";
    return false;
  }
  return true;
}

}  // namespace blur::sim
