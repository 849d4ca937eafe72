// Markdown report: for pull-request comments and CI step summaries. Failures first, each with the
// command that re-runs it; then every cell; then the environment that shaped the numbers.
#include <cmath>

#include <fmt/format.h>

#include "reports/report_writers.h"

namespace sharebench {

namespace {
std::string num(double v, int precision) { return std::isnan(v) ? "–" : fmt::format("{:.{}f}", v, precision); }

std::string result_word(const CellResult& c) {
  if (!c.as_expected()) return "❌ unexpected";
  if (!c.expected.clean()) return "🐞 bug caught";
  return "✅ ok";
}

// Markdown table cells must not contain a bare pipe or a newline.
std::string cell_text(std::string s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += "\\|";
    else if (ch == '\n') out += ' ';
    else out += ch;
  }
  return out;
}
}  // namespace

std::string render_markdown(const RunResult& run) {
  int unexpected = 0, caught = 0;
  for (const auto& c : run.cells) {
    unexpected += c.as_expected() ? 0 : 1;
    caught += c.as_expected() && !c.expected.clean() ? 1 : 0;
  }
  std::string md = fmt::format("# sharebench run {}\n\n**{}** · {} cells · {} as expected ({} planted bugs caught) · "
                               "**{} unexpected** · started {}\n\n",
                               run.run_id, run.status, run.cells.size(), run.cells.size() - unexpected, caught,
                               unexpected, run.started_at);
  if (const std::string w = oversubscription_warning(run); !w.empty()) md += fmt::format("> ⚠️ Warning: {}.\n\n", w);

  if (unexpected > 0) {
    md += "## Failures\n\n";
    for (const auto& c : run.cells) {
      if (c.as_expected()) continue;
      md += fmt::format("### `{}`\n\n", c.config.id());
      for (const auto& r : c.repetitions) {
        if (r.as_expected) continue;
        md += fmt::format("Repetition {}: {}.\n\n", r.index, r.expectation_message);
        if (r.status != RunStatus::kCompleted) md += fmt::format("- status **{}**: {}\n", to_string(r.status), cell_text(r.status_message));
        for (const auto& ch : r.checks) {
          if (!check_as_expected(c.expected, ch)) {
            md += fmt::format("- **{}** `{}`: {}\n", to_string(ch.verdict), ch.name, cell_text(ch.message));
          }
        }
        for (const auto& w : r.workers) {
          if (!w.stall.empty()) md += fmt::format("- rank {} stuck: {}\n", w.rank, cell_text(w.stall));
          if (!w.stacks.empty()) {
            md += fmt::format("\n<details><summary>rank {} stacks</summary>\n\n```\n{}```\n</details>\n\n", w.rank, w.stacks);
          }
          if (!w.error.empty()) md += fmt::format("- rank {} said: {}\n", w.rank, cell_text(w.error));
        }
        md += "\n";
      }
      md += fmt::format("Reproduce:\n\n```sh\n{}\n```\n\n", c.repro);
    }
  }

  md += "## Cells\n\n| cell | result | steps/s | samples/s | held-out loss | serial | lock wait | launch (ms) |\n"
        "|---|---|--:|--:|--:|--:|--:|--:|\n";
  for (const auto& c : run.cells) {
    const double wait = cell_mean(c, "lock_wait_frac");
    md += fmt::format("| `{}` | {} | {} | {} | {} | {} | {} | {} |\n", c.config.id(), result_word(c),
                      num(cell_mean(c, "steps_per_s"), 0), num(cell_mean(c, "samples_per_s"), 0),
                      num(cell_mean(c, "heldout_loss"), 3), num(cell_mean(c, "serial_heldout_loss"), 3),
                      std::isnan(wait) ? "–" : fmt::format("{:.0f}%", wait * 100),
                      num(cell_mean(c, "launch_s_max") * 1000, 1));
  }
  md += "\n## Environment\n\n| | |\n|---|---|\n";
  for (const auto& [k, v] : run.environment) md += fmt::format("| {} | {} |\n", k, cell_text(v));
  return md;
}

}  // namespace sharebench
