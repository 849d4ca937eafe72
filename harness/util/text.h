// Text from outside (command-line arguments, file contents) before it reaches a terminal or a
// JSON file: whether it is valid UTF-8 (nlohmann/json refuses anything else), and a form safe to
// print, with control bytes (an ANSI escape sequence that would recolour or move the cursor) and
// invalid bytes shown as \xNN instead of being written raw. And text into a fixed buffer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sharebench {

// Copies `text` into a fixed buffer of `size` bytes (a record in shared memory), cut to fit and
// NUL-terminated. memcpy only: safe in a forked child or an exit handler.
void copy_text(char* to, std::size_t size, std::string_view text);

// True when `text` is well-formed UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF).
bool is_valid_utf8(std::string_view text);

// `text` with every byte below 0x20, 0x7f and every byte of an invalid UTF-8 sequence written as
// \xNN (newline and tab too): one line, printable on any terminal.
std::string printable(std::string_view text);

// The time now in UTC, formatted by strftime ("%Y-%m-%dT%H:%M:%SZ").
std::string utc_now(const char* format);

// The same for many lines (a program's output, a stack): newline and tab are kept; C1 controls
// (U+0080..U+009F, which some terminals obey as escapes) are written as \u00NN too.
std::string printable_lines(std::string_view text);

// The one of `known` closest to a misspelled `name` (Damerau-Levenshtein distance at most 2, or a
// third of the name's length), for a "did you mean" in an error; "" when none is that close.
std::string closest_name(const std::string& name, const std::vector<std::string>& known);

// Every line of `text` longer than `width` characters (code points) broken at spaces, its
// continuation indented four more than the line itself: a report that fits a terminal of that width.
// A word longer than the room is left whole.
std::string wrapped(std::string_view text, std::size_t width);

// The first line of `text`, cut to `width` characters (code points) with "…" where it was cut: a
// summary line that fits a terminal, the whole of it said elsewhere.
std::string truncated_line(std::string_view text, std::size_t width);

// "1 planted bug caught", "3 planted bugs caught": the count and the words that agree with it.
std::string counted(long long n, std::string_view one, std::string_view many);

}  // namespace sharebench
