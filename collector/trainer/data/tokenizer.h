// The training tokenizer: UTF-8 text -> sentences of lower-case word tokens.
// The rules (docs/training-data.md has the full list and the reasons):
//
//   - Input is decoded as UTF-8. A byte that does not start a valid,
//     shortest-form sequence (or a surrogate / > U+10FFFF) decodes as
//     U+FFFD and acts as a separator: invalid input never throws or crashes.
//   - Overstrike (X BACKSPACE Y, old terminal underlining and accents, which
//     the fortune files contain) keeps the letter: "_\bw" -> "w",
//     "'\be" -> "e", "a\b_" -> "a".
//   - Word characters: ASCII letters and digits; Latin-1, Latin Extended-A/B,
//     Greek, Cyrillic letters and combining marks; letters of other scripts
//     (any code point outside the punctuation, symbol, emoji, control and
//     private-use blocks). Lower-casing: ASCII, Latin-1, Latin Extended-A,
//     Greek and Cyrillic capitals; nothing else (no Unicode normalization).
//   - Apostrophes (' and U+2019) are kept, as ASCII ', only between two word
//     characters (don't, o'clock, dog's); elsewhere they are separators.
//   - Every other character (hyphens, quotes, brackets, symbols, digits'
//     separators, emoji) separates words and is dropped.
//   - A sentence ends at '.', '!', '?' or U+2026 followed (after optional
//     closing quotes or brackets) by whitespace or the end of the text,
//     except a '.' after a single letter (initials, e.g.) or a listed
//     abbreviation (mr, dr, st, ...); at a blank line; and at the end of the
//     text. Empty sentences are dropped.
#ifndef BLUR_TRAINER_DATA_TOKENIZER_H
#define BLUR_TRAINER_DATA_TOKENIZER_H

#include <string>
#include <string_view>
#include <vector>

namespace blur::trainer {

using Sentence = std::vector<std::string>;

class Tokenizer {
 public:
  // The sentences of `text`, each a list of lower-case UTF-8 words.
  std::vector<Sentence> sentences(std::string_view text) const;

  // All words of `text` in order (sentences concatenated).
  std::vector<std::string> words(std::string_view text) const;

  // `entry` (a word-list line) as the single token the tokenizer would make
  // of it, or "" when it is not exactly one token ("ice cream", "e-mail",
  // "--"). Used for the public word list and user vocabularies.
  std::string normalize_word(std::string_view entry) const;
};

// True when `bytes` is valid UTF-8 (shortest form, no surrogates, at most
// U+10FFFF). On false, *error_offset (if given) is the first bad byte.
bool is_valid_utf8(std::string_view bytes, size_t* error_offset = nullptr);

}  // namespace blur::trainer

#endif  // BLUR_TRAINER_DATA_TOKENIZER_H
