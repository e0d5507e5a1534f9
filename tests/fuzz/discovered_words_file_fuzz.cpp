// libFuzzer: the discovered-words file (common/discovered_words_file.h),
// which blur-trainer train --discovered-words reads from whatever file it
// is given. Any bytes: no crash, no exception; a refusal names the file;
// parsed words are non-empty, unique and one line each, and the words and
// source written back parse to the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <unordered_set>

#include "common/discovered_words_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace blur::common;
  const std::string text(reinterpret_cast<const char*>(data), size);
  DiscoveredWords found;
  std::string error;
  if (!parse_discovered_words(text, "fuzz.txt", &found, &error)) {
    if (error.rfind("fuzz.txt", 0) != 0) std::abort();  // names the file
    return 0;
  }
  std::unordered_set<std::string> seen;
  for (const std::string& word : found.words) {
    if (word.empty() || word.find_first_of("\r\n") != std::string::npos) std::abort();
    if (!seen.insert(word).second) std::abort();
  }
  std::string again;
  if (!format_discovered_words(found, &again, &error)) std::abort();
  DiscoveredWords reparsed;
  if (!parse_discovered_words(again, "again", &reparsed, &error)) std::abort();
  if (reparsed.words != found.words || reparsed.source != found.source) std::abort();
  return 0;
}
