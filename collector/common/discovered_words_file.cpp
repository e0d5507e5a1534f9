#include "common/discovered_words_file.h"

#include <fstream>
#include <sstream>
#include <unordered_set>

namespace blur::common {

namespace {

bool one_line(const std::string& text) { return text.find_first_of("\r\n") == std::string::npos; }

}  // namespace

bool format_discovered_words(const DiscoveredWords& found, std::string* text, std::string* error) {
  if (!one_line(found.source)) {
    *error = "the source of the discovered words is not one line";
    return false;
  }
  std::unordered_set<std::string> seen;
  std::string out =
      std::string(kDiscoveredWordsHeader) + '\n' + kDiscoveredWordsSource + found.source + '\n';
  for (const std::string& word : found.words) {
    if (word.empty() || !one_line(word)) {
      *error = "a discovered word is empty or holds a line break";
      return false;
    }
    if (!seen.insert(word).second) {
      *error = "the discovered word '" + word + "' repeats";
      return false;
    }
    out += word;
    out += '\n';
  }
  *text = std::move(out);
  return true;
}

bool parse_discovered_words(const std::string& text, const std::string& name,
                            DiscoveredWords* found, std::string* error) {
  std::istringstream lines(text);
  const std::string source_prefix = kDiscoveredWordsSource;
  std::string header, source;
  if (!std::getline(lines, header) || header != kDiscoveredWordsHeader ||
      !std::getline(lines, source) || source.compare(0, source_prefix.size(), source_prefix) != 0) {
    *error = name +
             " is not a discovered-words file (blur-collector discovered-words --out): "
             "it must start with the lines '" +
             std::string(kDiscoveredWordsHeader) + "' and '" + source_prefix + "...'";
    return false;
  }
  DiscoveredWords read;
  read.source = source.substr(source_prefix.size());
  if (!one_line(read.source)) {
    *error = name + ":2: a carriage return in the source";
    return false;
  }
  std::unordered_set<std::string> seen;
  std::string word;
  for (size_t line = 3; std::getline(lines, word); ++line) {
    const std::string where = name + ":" + std::to_string(line) + ": ";
    if (word.empty() || !one_line(word)) {
      *error = where + "an empty word, or a carriage return in one";
      return false;
    }
    if (!seen.insert(word).second) {
      *error = where + "'" + word + "' repeats";
      return false;
    }
    read.words.push_back(std::move(word));
  }
  *found = std::move(read);
  return true;
}

bool write_discovered_words(const std::string& path, const DiscoveredWords& found,
                            std::string* error) {
  std::string text;
  if (!format_discovered_words(found, &text, error)) return false;
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << text;
  file.close();
  if (!file) {
    *error = "cannot write " + path;
    return false;
  }
  return true;
}

bool read_discovered_words(const std::string& path, DiscoveredWords* found, std::string* error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    *error = "cannot read " + path;
    return false;
  }
  std::ostringstream text;
  text << file.rdbuf();  // an empty file inserts nothing: the format refuses it
  return parse_discovered_words(text.str(), path, found, error);
}

}  // namespace blur::common
