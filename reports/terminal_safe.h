// terminal_safe: a run's text that came from outside (a program's output, its command line, a
// results file someone else wrote) made safe to print on a terminal, field by field, with
// printable_lines() (harness/util/text.h): no escape sequence reaches the terminal, so nothing
// clears the screen, sets the window title or hides a line.
#pragma once

#include "harness/results/results.h"

namespace sharebench {

// Every string of the run, whatever field holds it, made printable_lines().
void make_terminal_safe(RunResult& run);

}  // namespace sharebench
