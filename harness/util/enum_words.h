// One table per enum of the words it is written as (in results.json, on the command line, in every
// report), read both ways: an enum's to_string and its parser are each one line over its table,
// so a value and its word are written once.
//   inline constexpr EnumWord<Verdict> kVerdictWords[] = {{Verdict::kPass, "pass"}, ...};
//   std::string_view to_string(Verdict v) { return word_of(kVerdictWords, v); }
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace sharebench {

template <typename E>
struct EnumWord {
  E value;
  std::string_view word;
};

// The word of `value`; "?" for a value missing from the table (a bug, shown rather than hidden).
template <typename E, std::size_t N>
constexpr std::string_view word_of(const EnumWord<E> (&table)[N], E value) {
  for (const EnumWord<E>& w : table) {
    if (w.value == value) return w.word;
  }
  return "?";
}

// The value written as `word`; nullopt for a word not in the table.
template <typename E, std::size_t N>
constexpr std::optional<E> value_of_word(const EnumWord<E> (&table)[N], std::string_view word) {
  for (const EnumWord<E>& w : table) {
    if (w.word == word) return w.value;
  }
  return std::nullopt;
}

}  // namespace sharebench
