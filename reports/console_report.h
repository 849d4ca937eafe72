// Console report: the table of cells, outcomes and headline figures, then the details of every
// cell that did not go as expected (its failing checks and the command that re-runs it).
// Colour only when asked (the CLI asks when stdout is a terminal); the recommendation opens it
// (recommendation_report.h), its method in full with `explain`.
#pragma once

#include <string>

#include "harness/results/results.h"

namespace sharebench {

struct RenderOptions;  // reports/report_writers.h
std::string render_console(const RunResult& run, const RenderOptions& options);

}  // namespace sharebench
