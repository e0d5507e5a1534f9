// The file that carries a word-discovery metric's words from the collector
// to the trainer: `blur-collector discovered-words --out FILE` writes it,
// `blur-trainer train --discovered-words FILE` reads it. The trainer never
// opens the collector's store; this file is the whole interface, and this
// header and its .cpp are the format's only definition (docs/language-model.md).
//
// UTF-8 text, one item per line, each line ending in '\n':
//
//   #blur-discovered-words v1
//   #source word-discovery metric 2 (pem, epsilon 4 per report over ...)
//   the                  the words, most frequent first, each once,
//   a                    none empty and none holding '\r' or '\n'
//   ...
//
// The source line says where the words come from, for the training
// summary; the words' local DP was paid on the devices.
#ifndef BLUR_COMMON_DISCOVERED_WORDS_FILE_H
#define BLUR_COMMON_DISCOVERED_WORDS_FILE_H

#include <string>
#include <vector>

namespace blur::common {

inline constexpr const char* kDiscoveredWordsHeader = "#blur-discovered-words v1";
inline constexpr const char* kDiscoveredWordsSource = "#source ";

struct DiscoveredWords {
  std::vector<std::string> words;  // most frequent first
  std::string source;              // one line: what the words are
};

// The file's text for `found`. False, with *error, when a word or the
// source cannot be written as one line, or a word is empty or repeats.
bool format_discovered_words(const DiscoveredWords& found, std::string* text, std::string* error);

// The words and source of a file's text; `name` (the file's) starts the
// errors. False, with *error naming the line, when the text is not that
// format or holds an empty or repeated word. Any bytes: never throws.
bool parse_discovered_words(const std::string& text, const std::string& name,
                            DiscoveredWords* found, std::string* error);

// format_discovered_words to `path`, replacing it (nothing written when the
// words cannot be); also false when the file cannot be written.
bool write_discovered_words(const std::string& path, const DiscoveredWords& found,
                            std::string* error);

// parse_discovered_words of the file at `path`; also false when it cannot
// be read.
bool read_discovered_words(const std::string& path, DiscoveredWords* found, std::string* error);

}  // namespace blur::common

#endif  // BLUR_COMMON_DISCOVERED_WORDS_FILE_H
