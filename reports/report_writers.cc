// The table of report formats and what the writers share.
#include "reports/report_writers.h"
#include "reports/terminal_safe.h"

#include "harness/results/recommendation.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/results/results_json.h"
#include "harness/results/run_directory.h"
#include "reports/console_report.h"
#include "harness/util/statistics.h"

namespace sharebench {

// A file format's row: its name, its file, and its writer `std::string RENDER(const RunResult&)`,
// defined in its own file of this folder and declared here by the row itself (a declaration at
// block scope), so a new format is that file and this one line.
#define SHAREBENCH_FILE_FORMAT(name, file, render)                 \
  ReportFormat {                                                   \
    name, file, [](const RunResult& r, const RenderOptions&) {     \
      std::string render(const RunResult&);                        \
      return render(r);                                            \
    }                                                              \
  }

const std::vector<ReportFormat>& report_formats() {
  static const std::vector<ReportFormat> formats{
      {"console", "", [](const RunResult& r, const RenderOptions& o) { return render_console(r, o); }},
      {"json", "", [](const RunResult& r, const RenderOptions&) { return dump_json(results_to_json(r), 1) + "\n"; }},
      SHAREBENCH_FILE_FORMAT("md", "report.md", render_markdown),
      SHAREBENCH_FILE_FORMAT("html", "report.html", render_html),
      SHAREBENCH_FILE_FORMAT("csv", "results.csv", render_csv),
      SHAREBENCH_FILE_FORMAT("junit", "junit.xml", render_junit),
      SHAREBENCH_FILE_FORMAT("gbench", "gbench.json", render_gbench_json),
      SHAREBENCH_FILE_FORMAT("tap", "results.tap", render_tap),
  };
  return formats;
}

#undef SHAREBENCH_FILE_FORMAT

const ReportFormat* find_report_format(const std::string& name) {
  for (const auto& f : report_formats()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::vector<std::string> report_format_names(bool with_none) {
  std::vector<std::string> names;
  for (const auto& f : report_formats()) names.push_back(f.name);
  if (with_none) names.emplace_back("none");
  return names;
}

std::string report_formats_help(const std::string& dir) {
  std::vector<std::string> printed, files;
  for (const auto& f : report_formats()) (f.to_stdout() ? printed : files).push_back(f.name);
  return fmt::format("{} print to stdout; {} are written into {}", fmt::join(printed, " and "), fmt::join(files, ", "),
                     dir);
}

std::vector<std::string> write_reports(const RunResult& run, const std::vector<std::string>& formats,
                                       const std::string& dir) {
  std::vector<std::string> written;
  // A file is printed too (`cat report.md`): a program's escape sequences must not reach a terminal
  // from it either, whatever its format.
  RunResult safe = run;
  make_terminal_safe(safe);
  const bool holds_program_output = keeps_program_output_private(run);
  for (const std::string& name : formats) {
    const ReportFormat* f = find_report_format(name);
    if (!f || f->to_stdout()) continue;
    const std::string path = dir + "/" + f->file_name;
    write_file_atomically(path, f->render(safe, RenderOptions{}), holds_program_output ? 0600 : 0644);
    written.push_back(path);
  }
  return written;
}

void print_reports(const RunResult& run, const std::vector<std::string>& formats, const RenderOptions& options,
                   std::FILE* out) {
  for (const std::string& name : formats) {
    const ReportFormat* f = find_report_format(name);
    if (f && f->to_stdout()) std::fputs(f->render(run, options).c_str(), out);
  }
}

std::string oversubscription_warning(const RunResult& run) {
  const auto it = run.environment.find("cores");
  const int cores = it == run.environment.end() ? 0 : std::atoi(it->second.c_str());
  int most = 0;
  for (const auto& c : run.cells) {
    most = std::max(most, c.config.procs * static_cast<int>(c.config.workload.threads_per_worker));
  }
  if (cores <= 0 || most <= cores) return "";
  return fmt::format("up to {} worker threads ran on {} cores: figures above {} processes measure "
                     "oversubscription, not scaling", most, cores, cores);
}

std::vector<std::string> measurement_warnings(const RunResult& run) {
  std::vector<std::string> out;
  if (std::string w = oversubscription_warning(run); !w.empty()) out.push_back(std::move(w));
  const auto it = run.environment.find("conditions_warning");
  if (it == run.environment.end()) return out;
  const std::string& text = it->second;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find("; ", start), text.size());
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 2;
  }
  return out;
}

std::string measurement_conditions_line(const RunResult& run) {
  const auto get = [&](const char* key) {
    const auto it = run.environment.find(key);
    return it == run.environment.end() ? std::string() : it->second;
  };
  if (get("load_before").empty()) return "";
  const std::string other = get("other_cpu_cores");
  return fmt::format("load {} -> {} on {} cores, other processes {:.0f} % of a core, governor {}, boost {}",
                     get("load_before"), get("load_after"), get("usable_cores"),
                     other.empty() ? 0.0 : 100 * std::atof(other.c_str()), get("cpu_governor"), get("cpu_boost"));
}

double cell_mean(const CellResult& cell, const std::string& metric) {
  double sum = 0;
  int n = 0;
  for (const Repetition* r : measured_repetitions(cell)) {  // a calibration pilot's figures do not count
    if (auto it = r->metrics.find(metric); it != r->metrics.end()) {
      sum += it->second;
      ++n;
    }
  }
  return n ? sum / n : std::numeric_limits<double>::quiet_NaN();
}

Spread cell_spread(const CellResult& cell, const std::string& metric) {
  std::vector<double> v;
  for (const Repetition* r : measured_repetitions(cell)) {
    if (auto it = r->metrics.find(metric); it != r->metrics.end() && std::isfinite(it->second)) v.push_back(it->second);
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (v.empty()) return Spread{nan, nan, nan, 0};
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return Spread{median(v), *lo, *hi, static_cast<int>(v.size())};
}

bool timed_region_too_short(const CellResult& cell) {
  for (const Repetition* r : measured_repetitions(cell)) {
    auto it = r->metrics.find("run_s");
    if (it != r->metrics.end() && it->second < kMinTimedRegionS) return true;
  }
  return false;
}

std::string outcome_word(Outcome o) { return std::string(outcome_label(o)); }

std::vector<const Repetition*> unexpected_repetitions(const CellResult& cell) {
  std::vector<const Repetition*> out;
  for (const auto& r : cell.repetitions) {
    if (!r.as_expected && r.status != RunStatus::kInterrupted && r.status != RunStatus::kSkipped) out.push_back(&r);
  }
  return out;
}

}  // namespace sharebench
