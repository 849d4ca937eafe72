// Console report: the table of cells, outcomes and headline figures, then the details of every
// cell that did not go as expected (its failing checks and the command that re-runs it).
// Colour only when `colour` is set (the CLI sets it when stdout is a terminal).
#pragma once

#include <string>

#include "harness/results/results.h"

namespace sharebench {

std::string render_console(const RunResult& run, bool colour);

}  // namespace sharebench
