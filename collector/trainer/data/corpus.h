// Training corpora: UTF-8 text files read into privacy units, and the
// deterministic train / validation / test split of those units.
//
// Formats (docs/training-data.md):
//   lines     one example per line; each non-blank line is a unit.
//   user_tab  `user_id<TAB>text` per line; all lines of one user id (in any
//             file, in any order) form one unit, the user's lines its texts.
//   fortune   fortune(6) files: entries separated by lines holding only `%`;
//             each non-blank entry (possibly many lines) is a unit.
//   auto      fortune if some line is `%`, else user_tab if every non-blank
//             line has a tab with a non-empty id before it, else lines.
// A directory is read as its regular files in name order, skipping the
// fortune indexes (*.dat) and any file already read under another name
// (symlinks such as cookie.u8 -> cookie, hard links): same device + inode.
//
// Errors (missing file, unreadable file, invalid UTF-8 with the default
// policy, a user_tab line without an id, no units at all) throw CorpusError
// naming the file and line.
#ifndef BLUR_TRAINER_DATA_CORPUS_H
#define BLUR_TRAINER_DATA_CORPUS_H

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace blur::trainer {

class CorpusError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class CorpusFormat { kAuto, kLines, kUserTab, kFortune };

// "auto", "lines", "user_tab", "fortune"; parse throws CorpusError.
CorpusFormat parse_corpus_format(std::string_view name);
const char* corpus_format_name(CorpusFormat format);

enum class InvalidUtf8 {
  kReject,   // CorpusError "file:line: invalid UTF-8 at byte N"
  kReplace,  // each bad byte becomes U+FFFD (a separator for the tokenizer)
};

// One privacy unit: everything one contributor wrote.
struct Unit {
  // What the split hashes: the user id (user_tab) or the unit's text
  // (lines, fortune), so identical examples always land in the same split.
  std::string key;
  std::vector<std::string> texts;  // lines or fortune entries, in file order
};

struct Corpus {
  std::vector<Unit> units;
  std::vector<std::string> files;  // the files read, in order
};

// Reads a file or a directory (see above).
Corpus read_corpus(const std::string& path, CorpusFormat format = CorpusFormat::kAuto,
                   InvalidUtf8 policy = InvalidUtf8::kReject);
// Reads these files in order, as one corpus (user ids merge across files).
Corpus read_corpus_files(const std::vector<std::string>& paths,
                         CorpusFormat format = CorpusFormat::kAuto,
                         InvalidUtf8 policy = InvalidUtf8::kReject);

// The default demo corpus: the plain-text files of Debian's `fortunes`
// (40 files) and `fortunes-min` (fortunes, literature, riddles) packages
// under `directory`, in name order. The *.u8 names (symlinks to the same
// files) and the *.dat indexes are not listed; nor is any other package's
// file that may share the directory (fortunes-off, fortunes-bofh-excuses).
std::vector<std::string> default_corpus_files(
    const std::string& directory = "/usr/share/games/fortunes");
Corpus read_default_corpus(const std::string& directory = "/usr/share/games/fortunes");

// --- the split ---------------------------------------------------------------

enum class Split { kTrain, kValidation, kTest };
const char* split_name(Split split);

struct SplitConfig {
  // Percentages of the hash space; train gets the rest (default 80/10/10).
  unsigned validation_percent = 10;
  unsigned test_percent = 10;
  // Mixed into the hash: another salt gives another (equally valid) split.
  std::string salt = "blur-split-v1";
};

// Bucket = first 8 bytes (big-endian) of SHA-256(salt || 0x00 || key)
// mod 100; [0, train%) train, then validation, then test. Pure function of
// (key, config): the same unit lands in the same split on every machine.
Split split_of(std::string_view key, const SplitConfig& config = {});

struct SplitCorpus {
  std::vector<Unit> train;
  std::vector<Unit> validation;
  std::vector<Unit> test;
};
SplitCorpus split_corpus(const Corpus& corpus, const SplitConfig& config = {});

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_DATA_CORPUS_H
