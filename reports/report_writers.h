// Report writers: one per format, each a pure function of the results model (as google/benchmark's
// reporters are of its Run). The runner never formats; `sharebench report` and `run --format`
// both go through write_reports().
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "harness/results/results.h"

namespace sharebench {

// How a format renders where that matters: the console's colour, and its recommendation's method
// in full (--explain) rather than a legend line.
struct RenderOptions {
  bool colour = false;
  bool explain = false;
};

// One output format: the registry below is what every command's --format offers (run, exec,
// report, soak), in this order. A new file format is its render function in a file of its own and
// one row of report_formats() (SHAREBENCH_FILE_FORMAT, which declares the function itself).
struct ReportFormat {
  std::string name;       // as given to --format
  std::string file_name;  // written into the output directory; empty: printed on stdout
  std::string (*render)(const RunResult&, const RenderOptions&);
  bool to_stdout() const { return file_name.empty(); }
};

// Every format, in a stable order: those printed on stdout first (console, json), then the files.
const std::vector<ReportFormat>& report_formats();
const ReportFormat* find_report_format(const std::string& name);
// The names --format accepts; `with_none` adds "none" (print nothing), for commands that print by default.
std::vector<std::string> report_format_names(bool with_none);
// "console and json print to stdout; md, html, csv, junit, gbench are written into DIR": for --help.
std::string report_formats_help(const std::string& dir);

// Writes each named file format into `dir` (atomically); returns the paths written.
std::vector<std::string> write_reports(const RunResult& run, const std::vector<std::string>& formats,
                                       const std::string& dir);
// Prints each named stdout format on `out`, in the order named.
void print_reports(const RunResult& run, const std::vector<std::string>& formats, const RenderOptions& options,
                   std::FILE* out);

std::string render_markdown(const RunResult& run);
std::string render_html(const RunResult& run);
std::string render_csv(const RunResult& run);
std::string render_junit(const RunResult& run);
std::string render_gbench_json(const RunResult& run);
std::string render_tap(const RunResult& run);

// Shared by the writers: the environment warning (workers x threads above the cores), or "".
std::string oversubscription_warning(const RunResult& run);
// Every warning that makes the run's figures doubtful: oversubscription, then what the measurement
// conditions recorded (harness/env/machine_load.h: busy neighbours, a loaded machine, a governor
// that scales the clock). Empty for a run measured on a quiet machine.
std::vector<std::string> measurement_warnings(const RunResult& run);
// "load 0.10 -> 0.95 on 2 cores, other processes 3 % of a core, governor unreadable, boost
// unreadable": the conditions in one line; "" for a run that did not record them (older files).
std::string measurement_conditions_line(const RunResult& run);
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
