#include "trainer/data/tokenizer.h"

#include <algorithm>
#include <array>

namespace blur::trainer {

namespace {

constexpr char32_t kReplacement = 0xFFFD;
constexpr char32_t kBackspace = 0x08;

// Decodes one code point at bytes[*i], advancing *i. Invalid or truncated
// sequences yield kReplacement and consume exactly one byte, so decoding
// resynchronizes at the next byte.
char32_t decode_one(std::string_view bytes, size_t* i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(bytes[k]); };
  const size_t n = bytes.size();
  const unsigned char b0 = byte(*i);
  if (b0 < 0x80) {
    ++*i;
    return b0;
  }
  size_t length = 0;
  char32_t cp = 0;
  unsigned char low = 0x80;   // bounds of the second byte (rejects overlong forms,
  unsigned char high = 0xBF;  // surrogates and code points above U+10FFFF)
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    length = 2;
    cp = b0 & 0x1Fu;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    length = 3;
    cp = b0 & 0x0Fu;
    if (b0 == 0xE0) low = 0xA0;
    if (b0 == 0xED) high = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    length = 4;
    cp = b0 & 0x07u;
    if (b0 == 0xF0) low = 0x90;
    if (b0 == 0xF4) high = 0x8F;
  } else {
    ++*i;
    return kReplacement;
  }
  if (*i + length > n) {
    ++*i;
    return kReplacement;
  }
  for (size_t k = 1; k < length; ++k) {
    const unsigned char b = byte(*i + k);
    const unsigned char lo = k == 1 ? low : 0x80;
    const unsigned char hi = k == 1 ? high : 0xBF;
    if (b < lo || b > hi) {
      ++*i;
      return kReplacement;
    }
    cp = cp << 6 | (b & 0x3Fu);
  }
  *i += length;
  return cp;
}

void append_utf8(char32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool in(char32_t c, char32_t first, char32_t last) { return c >= first && c <= last; }

bool is_space(char32_t c) {
  return in(c, 0x09, 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         in(c, 0x2000, 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

bool is_apostrophe(char32_t c) { return c == '\'' || c == 0x2019; }

bool is_terminal(char32_t c) {
  return c == '.' || c == '!' || c == '?' || c == 0x2026 || c == 0x203C || in(c, 0x2047, 0x2049);
}

bool is_closer(char32_t c) {
  return c == '"' || c == '\'' || c == ')' || c == ']' || c == '}' || c == 0x2019 || c == 0x201D ||
         c == 0xBB || c == 0x203A;
}

bool is_word_char(char32_t c) {
  if (c < 0x80) {
    return in(c, 'a', 'z') || in(c, 'A', 'Z') || in(c, '0', '9');
  }
  if (c < 0xC0) return c == 0xAA || c == 0xB5 || c == 0xBA;
  if (c == 0xD7 || c == 0xF7) return false;
  if (c < 0x370) return true;  // Latin-1 letters, Latin Extended-A/B, IPA, modifiers, combining
  if (c == 0x37E || c == 0x387) return false;  // Greek question mark, ano teleia
  if (c < 0x2000) return true;
  // Punctuation, symbol, emoji, control-picture, private-use and special blocks.
  return !(in(c, 0x2000, 0x2BFF) || in(c, 0x2E00, 0x2E7F) || in(c, 0x3000, 0x303F) ||
           in(c, 0xD800, 0xF8FF) || in(c, 0xFE00, 0xFE1F) || in(c, 0xFE30, 0xFE6F) || c == 0xFEFF ||
           in(c, 0xFF00, 0xFF0F) || in(c, 0xFF1A, 0xFF20) || in(c, 0xFF3B, 0xFF40) ||
           in(c, 0xFF5B, 0xFF65) || in(c, 0xFFF0, 0xFFFF) || in(c, 0x1F000, 0x1FAFF) ||
           in(c, 0xE0000, 0xE007F) || c >= 0xF0000);
}

char32_t to_lower(char32_t c) {
  if (in(c, 'A', 'Z')) return c + 32;
  if (c < 0xC0) return c;
  if (in(c, 0xC0, 0xDE) && c != 0xD7) return c + 32;
  if (in(c, 0x100, 0x137) || in(c, 0x14A, 0x177)) return (c % 2 == 0) ? c + 1 : c;
  if (in(c, 0x139, 0x148) || in(c, 0x179, 0x17E)) return (c % 2 == 1) ? c + 1 : c;
  if (c == 0x178) return 0xFF;
  if (c == 0x386) return 0x3AC;
  if (in(c, 0x388, 0x38A)) return c + 37;
  if (c == 0x38C) return 0x3CC;
  if (c == 0x38E || c == 0x38F) return c + 63;
  if (in(c, 0x391, 0x3A9) && c != 0x3A2) return c + 32;
  if (in(c, 0x400, 0x40F)) return c + 80;
  if (in(c, 0x410, 0x42F)) return c + 32;
  return c;
}

// Words before a '.' that do not end a sentence (besides single letters).
bool is_abbreviation(const std::string& word) {
  static constexpr std::array<std::string_view, 27> kAbbreviations = {
      "approx", "capt", "col", "corp", "dept",   "dr",  "ft",  "gen", "gov",
      "inc",    "jr",   "lt",  "ltd",  "messrs", "mr",  "mrs", "ms",  "mt",
      "prof",   "pres", "rep", "rev",  "sen",    "sgt", "sr",  "st",  "vs"};
  return std::find(kAbbreviations.begin(), kAbbreviations.end(), word) != kAbbreviations.end();
}

// Decodes and resolves overstrike: X BACKSPACE Y keeps X when X is a word
// character and Y is not (a\b_), otherwise Y (_\bw, '\be, ^\bu).
std::u32string decode(std::string_view text) {
  std::u32string in_cps;
  in_cps.reserve(text.size());
  for (size_t i = 0; i < text.size();) in_cps.push_back(decode_one(text, &i));
  std::u32string out;
  out.reserve(in_cps.size());
  for (size_t i = 0; i < in_cps.size(); ++i) {
    const char32_t c = in_cps[i];
    if (c != kBackspace) {
      out.push_back(c);
      continue;
    }
    const bool next_is_word = i + 1 < in_cps.size() && is_word_char(in_cps[i + 1]);
    if (!out.empty() && is_word_char(out.back()) && !next_is_word) {
      ++i;  // keep the letter already out, drop the overstriking mark
    } else if (!out.empty()) {
      out.pop_back();
    }
  }
  return out;
}

class SentenceBuilder {
 public:
  void add_char(char32_t c) { append_utf8(to_lower(c), &word_); }
  void add_apostrophe() { word_.push_back('\''); }
  bool has_word() const { return !word_.empty(); }
  // Ends the current word; returns it (empty when there was none).
  std::string flush_word() {
    std::string word;
    if (!word_.empty()) {
      word = word_;
      sentence_.push_back(std::move(word_));
      word_.clear();
    }
    return word;
  }
  void end_sentence() {
    flush_word();
    if (!sentence_.empty()) sentences_.push_back(std::move(sentence_));
    sentence_.clear();
  }
  std::vector<Sentence> finish() {
    end_sentence();
    return std::move(sentences_);
  }

 private:
  std::string word_;
  Sentence sentence_;
  std::vector<Sentence> sentences_;
};

}  // namespace

std::vector<Sentence> Tokenizer::sentences(std::string_view text) const {
  const std::u32string cps = decode(text);
  const size_t n = cps.size();
  SentenceBuilder builder;
  int newlines = 0;  // newlines since the last non-space character
  for (size_t i = 0; i < n; ++i) {
    const char32_t c = cps[i];
    if (is_space(c)) {
      builder.flush_word();
      if (c == '\n' && ++newlines >= 2) builder.end_sentence();
      continue;
    }
    newlines = 0;
    if (is_apostrophe(c)) {
      if (builder.has_word() && i + 1 < n && is_word_char(cps[i + 1])) {
        builder.add_apostrophe();
      } else {
        builder.flush_word();
      }
    } else if (is_terminal(c)) {
      const bool after_word = i > 0 && is_word_char(cps[i - 1]);
      const std::string word = builder.flush_word();
      size_t j = i + 1;
      while (j < n && is_terminal(cps[j])) ++j;
      const bool single_dot = c == '.' && j == i + 1;
      while (j < n && is_closer(cps[j])) ++j;
      bool ends = j == n || is_space(cps[j]);
      if (ends && single_dot && after_word) {
        const bool initial = word.size() == 1 && word != "i";
        if (initial || is_abbreviation(word)) ends = false;
      }
      if (ends) builder.end_sentence();
      i = j - 1;  // the run of terminals and closers is consumed
    } else if (is_word_char(c)) {
      builder.add_char(c);
    } else {
      builder.flush_word();
    }
  }
  return builder.finish();
}

std::vector<std::string> Tokenizer::words(std::string_view text) const {
  std::vector<std::string> out;
  for (Sentence& sentence : sentences(text)) {
    for (std::string& word : sentence) out.push_back(std::move(word));
  }
  return out;
}

std::string Tokenizer::normalize_word(std::string_view entry) const {
  std::vector<std::string> tokens = words(entry);
  if (tokens.size() != 1) return {};
  return std::move(tokens[0]);
}

bool is_valid_utf8(std::string_view bytes, size_t* error_offset) {
  for (size_t i = 0; i < bytes.size();) {
    const size_t start = i;
    const char32_t cp = decode_one(bytes, &i);
    // A genuine U+FFFD is three bytes; a replacement for a bad byte is one.
    if (cp == kReplacement && i - start == 1) {
      if (error_offset != nullptr) *error_offset = start;
      return false;
    }
  }
  return true;
}

}  // namespace blur::trainer
