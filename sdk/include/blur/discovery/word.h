// A word for the discovery mechanisms: 1 to kMaxWordLength characters from
// [a-z'], packed 5 bits per character so that a prefix of a word is the
// word with its later characters cleared, and the hash of a prefix is
// linear in its characters (prefix_hash.h).
//
// Codes: 0 after the end, 'a'..'z' = 1..26, '\'' = 27 (kWordAlphabet = 28
// codes, end included). Character i sits at bits 5i..5i+4 of `low` for
// i < 12 and at bits 5(i-12).. of `high` for i >= 12. The app normalizes
// (lower case, no digits) before recording; Word::fitted maps anything
// else to the reserved word "'" (kReservedWord).
#ifndef BLUR_DISCOVERY_WORD_H
#define BLUR_DISCOVERY_WORD_H

#include <stddef.h>
#include <stdint.h>

#include "blur/result.h"

namespace blur {

inline constexpr uint32_t kMaxWordLength = 16;
inline constexpr uint32_t kWordAlphabet = 28;  // the end code and 27 characters
inline constexpr uint32_t kWordEnd = 0;
inline constexpr uint32_t kWordBitsPerCharacter = 5;
inline constexpr uint32_t kWordCharactersInLow = 12;
// The word sent for a text that is no word (Word::fitted): a lone apostrophe.
inline constexpr char kReservedWord[] = "'";

// The code of a character, or kWordAlphabet for one outside [a-z'].
constexpr uint32_t word_code(char c) {
  if (c >= 'a' && c <= 'z') return static_cast<uint32_t>(c - 'a') + 1;
  return c == '\'' ? 27u : kWordAlphabet;
}
// The character of a code in 1..27 ('\0' for the end code).
constexpr char word_character(uint32_t code) {
  return code == 0 ? '\0' : code == 27 ? '\'' : static_cast<char>('a' + (code - 1));
}

struct Word {
  uint64_t low;   // characters 0..11
  uint32_t high;  // characters 12..15
  uint32_t length;

  // kInvalidArgument unless 1 <= size <= kMaxWordLength and every
  // character is in [a-z'].
  static constexpr Result<Word> parse(const char* text, size_t size) {
    if (text == nullptr || size == 0 || size > kMaxWordLength) return Status::kInvalidArgument;
    Word word{0, 0, static_cast<uint32_t>(size)};
    for (uint32_t i = 0; i < size; ++i) {
      const uint32_t code = word_code(text[i]);
      if (code == kWordAlphabet) return Status::kInvalidArgument;
      word = word.with(i, code);
    }
    return word;
  }

  // What Client::record_word sends for any text, so that no content is
  // ever refused (a refusal would show it): an empty text or one with a
  // character outside [a-z'] becomes kReservedWord, a longer one its first
  // `longest` (1..kMaxWordLength) characters.
  static constexpr Word fitted(const char* text, size_t size, uint32_t longest) {
    const Word reserved{27, 0, 1};  // "'"
    if (text == nullptr || size == 0) return reserved;
    for (size_t i = 0; i < size; ++i) {
      if (word_code(text[i]) == kWordAlphabet) return reserved;
    }
    const size_t kept = size < longest ? size : longest;
    return parse(text, kept < kMaxWordLength ? kept : kMaxWordLength).value();
  }

  constexpr uint32_t code(uint32_t i) const {
    return i < kWordCharactersInLow
               ? static_cast<uint32_t>(low >> (kWordBitsPerCharacter * i)) & 31u
               : (high >> (kWordBitsPerCharacter * (i - kWordCharactersInLow))) & 31u;
  }
  // This word with character i set to `code` (i < kMaxWordLength, code <
  // kWordAlphabet, and character i previously the end code).
  constexpr Word with(uint32_t i, uint32_t code) const {
    Word word = *this;
    if (i < kWordCharactersInLow) {
      word.low |= uint64_t{code} << (kWordBitsPerCharacter * i);
    } else {
      word.high |= code << (kWordBitsPerCharacter * (i - kWordCharactersInLow));
    }
    return word;
  }
  // The first `characters` characters (the whole word if it is shorter).
  constexpr Word prefix(uint32_t characters) const {
    if (characters >= length) return *this;
    Word word{0, 0, characters};
    if (characters <= kWordCharactersInLow) {
      word.low =
          characters == 0 ? 0 : low & ((uint64_t{1} << (kWordBitsPerCharacter * characters)) - 1);
    } else {
      word.low = low;
      word.high =
          high & ((1u << (kWordBitsPerCharacter * (characters - kWordCharactersInLow))) - 1);
    }
    return word;
  }
};

}  // namespace blur

#endif  // BLUR_DISCOVERY_WORD_H
