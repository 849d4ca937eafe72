// Report writers: one per format, each a pure function of the results model (as google/benchmark's
// reporters are of its Run). The runner never formats; `sharebench report` and `run --format`
// both go through write_reports().
#pragma once

#include <string>
#include <vector>

#include "harness/results/results.h"

namespace sharebench {

struct ReportFormat {
  std::string name;       // as given to --format
  std::string file_name;  // written into the output directory
  std::string (*render)(const RunResult&);
};

// Every format that renders to a file, in a stable order.
const std::vector<ReportFormat>& report_formats();
const ReportFormat* find_report_format(const std::string& name);

// Writes each named format into `dir` (atomically); returns the paths written.
std::vector<std::string> write_reports(const RunResult& run, const std::vector<std::string>& formats,
                                       const std::string& dir);

std::string render_markdown(const RunResult& run);
std::string render_html(const RunResult& run);
std::string render_csv(const RunResult& run);
std::string render_junit(const RunResult& run);
std::string render_gbench_json(const RunResult& run);

// Shared by the writers: the environment warning (workers x threads above the cores), or "".
std::string oversubscription_warning(const RunResult& run);
// A cell's mean of a metric over its repetitions, or NaN.
double cell_mean(const CellResult& cell, const std::string& metric);
// A cell's median of a metric over its repetitions, with the smallest and largest; NaN when none.
struct Spread {
  double median, min, max;
  int n;
};
Spread cell_spread(const CellResult& cell, const std::string& metric);

// Below this many seconds of timed work a rate is mostly start-up jitter: launch, first-touch page
// faults and the slowest worker's start spread are tens of milliseconds on the 2-core VM
// (docs/performance.md), so under 0.2 s they are more than 10 % of the figure.
inline constexpr double kMinTimedRegionS = 0.2;
// True when some repetition of the cell timed less than kMinTimedRegionS of work.
bool timed_region_too_short(const CellResult& cell);

// The word each outcome shows as, the same in every format.
std::string outcome_word(Outcome o);
// The repetitions a failure block describes: those that went against the expectation.
std::vector<const Repetition*> unexpected_repetitions(const CellResult& cell);

}  // namespace sharebench
