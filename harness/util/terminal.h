// Terminal output: the one place that knows a terminal's control sequences. A line that redraws
// itself (the runner's progress line) writes through here; everything else is plain text.
#pragma once

#include <cstdio>
#include <string_view>

namespace sharebench::terminal {

// Whether `stream` is a terminal that takes control sequences (not a file, not TERM=dumb).
bool is_interactive(std::FILE* stream);

// Replaces the current line of `stream` with `text` (no newline), and flushes.
void redraw_line(std::FILE* stream, std::string_view text);

// Empties the current line of `stream` and puts the cursor at its start.
void erase_line(std::FILE* stream);

}  // namespace sharebench::terminal
