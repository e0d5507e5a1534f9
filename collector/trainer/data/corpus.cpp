#include "trainer/data/corpus.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "mbedtls/sha256.h"
#include "trainer/data/tokenizer.h"

namespace blur::trainer {

namespace {

std::string read_file(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) {
    throw CorpusError("corpus file '" + path + "': " + std::strerror(errno));
  }
  if (!S_ISREG(info.st_mode)) {
    throw CorpusError("corpus file '" + path + "': not a regular file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CorpusError("corpus file '" + path + "': cannot open");
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) throw CorpusError("corpus file '" + path + "': read error");
  return contents.str();
}

size_t line_of(std::string_view text, size_t offset) {
  return 1 + static_cast<size_t>(std::count(text.begin(), text.begin() + offset, '\n'));
}

// Validates (or repairs) the file's UTF-8; drops a leading byte-order mark.
std::string checked_text(const std::string& path, std::string bytes, InvalidUtf8 policy) {
  if (bytes.compare(0, 3, "\xEF\xBB\xBF") == 0) bytes.erase(0, 3);
  size_t bad = 0;
  if (is_valid_utf8(bytes, &bad)) return bytes;
  if (policy == InvalidUtf8::kReject) {
    throw CorpusError(path + ":" + std::to_string(line_of(bytes, bad)) +
                      ": invalid UTF-8 at byte " + std::to_string(bad) +
                      " (the corpus must be UTF-8 text)");
  }
  std::string repaired;
  repaired.reserve(bytes.size() + 16);
  std::string_view rest(bytes);
  while (!is_valid_utf8(rest, &bad)) {
    repaired.append(rest.substr(0, bad));
    repaired.append("\xEF\xBF\xBD");
    rest.remove_prefix(bad + 1);
  }
  repaired.append(rest);
  return repaired;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

bool is_blank(std::string_view s) {
  return s.find_first_not_of(" \t\r\n\v\f") == std::string_view::npos;
}

std::string_view trim_right(std::string_view s) {
  const size_t end = s.find_last_not_of(" \t\r\n\v\f");
  return end == std::string_view::npos ? std::string_view() : s.substr(0, end + 1);
}

bool is_fortune_separator(std::string_view line) { return trim_right(line) == "%"; }

CorpusFormat detect(const std::vector<std::string_view>& lines) {
  if (std::any_of(lines.begin(), lines.end(), is_fortune_separator)) return CorpusFormat::kFortune;
  bool any = false;
  for (std::string_view line : lines) {
    if (is_blank(line)) continue;
    any = true;
    const size_t tab = line.find('\t');
    if (tab == std::string_view::npos || tab == 0) return CorpusFormat::kLines;
  }
  return any ? CorpusFormat::kUserTab : CorpusFormat::kLines;
}

class CorpusBuilder {
 public:
  explicit CorpusBuilder(InvalidUtf8 policy) : policy_(policy) {}

  void add_file(const std::string& path, CorpusFormat format) {
    const std::string text = checked_text(path, read_file(path), policy_);
    const std::vector<std::string_view> lines = split_lines(text);
    if (format == CorpusFormat::kAuto) format = detect(lines);
    switch (format) {
      case CorpusFormat::kLines:
        for (std::string_view line : lines) {
          if (!is_blank(line)) add_unit(std::string(line));
        }
        break;
      case CorpusFormat::kFortune:
        add_fortunes(lines);
        break;
      case CorpusFormat::kUserTab:
        add_user_lines(path, lines);
        break;
      case CorpusFormat::kAuto:
        break;
    }
    corpus_.files.push_back(path);
  }

  Corpus finish(const std::string& what) {
    if (corpus_.units.empty()) {
      throw CorpusError("corpus " + what + ": no examples (empty or blank files)");
    }
    return std::move(corpus_);
  }

 private:
  void add_unit(std::string text) {
    Unit unit;
    unit.key = text;
    unit.texts.push_back(std::move(text));
    corpus_.units.push_back(std::move(unit));
  }

  void add_fortunes(const std::vector<std::string_view>& lines) {
    std::string entry;
    const auto flush = [&] {
      if (!is_blank(entry)) add_unit(entry);
      entry.clear();
    };
    for (std::string_view line : lines) {
      if (is_fortune_separator(line)) {
        flush();
        continue;
      }
      if (!entry.empty()) entry.push_back('\n');
      entry.append(line);
    }
    flush();
  }

  void add_user_lines(const std::string& path, const std::vector<std::string_view>& lines) {
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string_view line = lines[i];
      if (is_blank(line)) continue;
      const size_t tab = line.find('\t');
      if (tab == std::string_view::npos || tab == 0) {
        throw CorpusError(path + ":" + std::to_string(i + 1) + ": expected user_id<TAB>text" +
                          (tab == 0 ? " (empty user id)" : " (no tab)"));
      }
      const std::string_view text = line.substr(tab + 1);
      if (is_blank(text)) continue;
      std::string id(line.substr(0, tab));
      auto [it, inserted] = user_index_.try_emplace(id, corpus_.units.size());
      if (inserted) {
        Unit unit;
        unit.key = std::move(id);
        corpus_.units.push_back(std::move(unit));
      }
      corpus_.units[it->second].texts.emplace_back(text);
    }
  }

  InvalidUtf8 policy_;
  Corpus corpus_;
  std::unordered_map<std::string, size_t> user_index_;
};

const char* const kDefaultFortuneFiles[] = {
    // fortunes-min
    "fortunes", "literature", "riddles",
    // fortunes
    "art", "ascii-art", "computers", "cookie", "debian", "definitions", "disclaimer", "drugs",
    "education", "ethnic", "food", "goedel", "humorists", "kids", "knghtbrd", "law", "linux",
    "linuxcookie", "love", "magic", "medicine", "men-women", "miscellaneous", "news", "paradoxum",
    "people", "perl", "pets", "platitudes", "politics", "pratchett", "science", "songs-poems",
    "sports", "startrek", "tao", "translate-me", "wisdom", "work", "zippy"};

// CorpusFormat's names, in its order: one list for parsing and printing.
constexpr const char* kFormatNames[] = {"auto", "lines", "user_tab", "fortune"};
static_assert(std::size(kFormatNames) == static_cast<size_t>(CorpusFormat::kFortune) + 1);

}  // namespace

CorpusFormat parse_corpus_format(std::string_view name) {
  for (size_t i = 0; i < std::size(kFormatNames); ++i) {
    if (name == kFormatNames[i]) return static_cast<CorpusFormat>(i);
  }
  throw CorpusError("unknown corpus format '" + std::string(name) +
                    "' (auto, lines, user_tab, fortune)");
}

const char* corpus_format_name(CorpusFormat format) {
  const auto i = static_cast<size_t>(format);
  return i < std::size(kFormatNames) ? kFormatNames[i] : "?";
}

Corpus read_corpus_files(const std::vector<std::string>& paths, CorpusFormat format,
                         InvalidUtf8 policy) {
  CorpusBuilder builder(policy);
  for (const std::string& path : paths) builder.add_file(path, format);
  return builder.finish(paths.size() == 1 ? "'" + paths[0] + "'"
                                          : "of " + std::to_string(paths.size()) + " files");
}

Corpus read_corpus(const std::string& path, CorpusFormat format, InvalidUtf8 policy) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error || !fs::exists(status)) {
    throw CorpusError("corpus '" + path + "': no such file or directory");
  }
  if (!fs::is_directory(status)) return read_corpus_files({path}, format, policy);

  std::vector<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(path, error)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".dat") == 0) continue;
    if (!name.empty() && name[0] == '.') continue;
    if (entry.is_regular_file()) names.push_back(entry.path().string());
  }
  if (error) throw CorpusError("corpus directory '" + path + "': " + error.message());
  std::sort(names.begin(), names.end());
  // One file under several names (cookie and its symlink cookie.u8) is read
  // once, under the first name.
  std::set<std::pair<dev_t, ino_t>> seen;
  std::vector<std::string> files;
  for (const std::string& name : names) {
    struct stat info {};
    if (stat(name.c_str(), &info) != 0) continue;
    if (seen.insert({info.st_dev, info.st_ino}).second) files.push_back(name);
  }
  if (files.empty()) throw CorpusError("corpus directory '" + path + "': no text files");
  return read_corpus_files(files, format, policy);
}

std::vector<std::string> default_corpus_files(const std::string& directory) {
  std::vector<std::string> files;
  for (const char* name : kDefaultFortuneFiles) files.push_back(directory + "/" + name);
  std::sort(files.begin(), files.end());
  return files;
}

Corpus read_default_corpus(const std::string& directory) {
  const std::vector<std::string> files = default_corpus_files(directory);
  for (const std::string& file : files) {
    struct stat info {};
    if (stat(file.c_str(), &info) != 0) {
      throw CorpusError("default corpus: '" + file +
                        "' is missing (install the Debian packages fortunes and fortunes-min)");
    }
  }
  return read_corpus_files(files, CorpusFormat::kFortune, InvalidUtf8::kReject);
}

const char* split_name(Split split) {
  constexpr const char* kNames[] = {"train", "validation", "test"};  // Split's order
  static_assert(std::size(kNames) == static_cast<size_t>(Split::kTest) + 1);
  const auto i = static_cast<size_t>(split);
  return i < std::size(kNames) ? kNames[i] : "?";
}

Split split_of(std::string_view key, const SplitConfig& config) {
  if (config.validation_percent + config.test_percent > 100) {
    throw CorpusError("split: validation + test percentages exceed 100");
  }
  std::string message = config.salt;
  message.push_back('\0');
  message.append(key);
  unsigned char digest[32];
  mbedtls_sha256_ret(reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest,
                     0);
  uint64_t head = 0;
  for (int i = 0; i < 8; ++i) head = head << 8 | digest[i];
  const unsigned bucket = static_cast<unsigned>(head % 100);
  const unsigned train = 100 - config.validation_percent - config.test_percent;
  if (bucket < train) return Split::kTrain;
  if (bucket < train + config.validation_percent) return Split::kValidation;
  return Split::kTest;
}

SplitCorpus split_corpus(const Corpus& corpus, const SplitConfig& config) {
  SplitCorpus out;
  for (const Unit& unit : corpus.units) {
    switch (split_of(unit.key, config)) {
      case Split::kTrain:
        out.train.push_back(unit);
        break;
      case Split::kValidation:
        out.validation.push_back(unit);
        break;
      case Split::kTest:
        out.test.push_back(unit);
        break;
    }
  }
  return out;
}

}  // namespace blur::trainer
