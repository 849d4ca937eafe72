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

}  // namespace sharebench
