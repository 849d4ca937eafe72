// Markdown report: for pull-request comments and CI step summaries. Unexpected cells first, each
// with its evidence and the command that re-runs it; then the caught bugs with their evidence;
// then every cell (skipped cells as skipped, never as passed); then the environment. It formats
// each cell's outcome (harness/results/outcome.h) and decides nothing itself.
#include <cmath>
#include <map>

#include <algorithm>

#include <fmt/format.h>

#include "reports/recommendation_report.h"
#include "harness/util/text.h"
#include "reports/report_writers.h"

namespace sharebench {

namespace {
std::string num(double v, int precision) { return std::isnan(v) ? "–" : fmt::format("{:.{}f}", v, precision); }

std::string badge(Outcome o) {
  switch (o) {
    case Outcome::kOk: return "✅ ok";
    case Outcome::kBugCaught: return "🐞 bug caught";
    case Outcome::kFaultHandled: return "💥 fault handled";
    case Outcome::kSkipped: return "⏭️ skipped";
    case Outcome::kInterrupted: return "⏹️ interrupted";
    case Outcome::kUnexpected: return "❌ unexpected";
  }
  return "❌ unexpected";
}

// Text from outside (a program's output, a results file someone else wrote) as one line of a
// Markdown table cell or list item: no bare pipe, no newline, no raw HTML (a pull-request comment
// would render it). Only what opens markup is escaped: `<` (a tag) and `&` (an entity); a `>`
// inside a line is text to Markdown and stays readable in the raw file ("load 2.90 -> 1.79").
std::string cell_text(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += "\\|";
    else if (ch == '\n' || ch == '\r') out += ' ';
    else if (ch == '<') out += "&lt;";
    else if (ch == '&') out += "&amp;";
    else out += ch;
  }
  return out;
}

std::size_t longest_backtick_run(const std::string& s) {
  std::size_t longest = 0, run = 0;
  for (char ch : s) {
    run = ch == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

// An inline code span that holds any text: a delimiter longer than any run of backticks inside,
// pipes escaped for tables (GitHub reads \| inside a code span in a table as a pipe).
std::string code(const std::string& s) {
  std::string text;
  for (char ch : s) {
    if (ch == '|') text += "\\|";
    else if (ch == '\n' || ch == '\r') text += ' ';
    else text += ch;
  }
  const std::string ticks(longest_backtick_run(text) + 1, '`');
  const bool pad = !text.empty() && (text.front() == '`' || text.back() == '`');
  return pad ? ticks + " " + text + " " + ticks : ticks + text + ticks;
}

// A fenced block that holds any text: the fence is longer than any run of backticks inside, so a
// program's output that holds ``` cannot close it and put raw HTML into the report.
std::string fenced(const std::string& s, const char* language = "") {
  const std::string fence(std::max<std::size_t>(3, longest_backtick_run(s) + 1), '`');
  return fmt::format("{}{}\n{}{}{}\n", fence, language, s, s.empty() || s.back() == '\n' ? "" : "\n", fence);
}
}  // namespace

std::string render_markdown(const RunResult& run) {
  std::map<Outcome, int> counts;
  for (const auto& c : run.cells) ++counts[c.outcome().kind];
  const int green = counts[Outcome::kOk] + counts[Outcome::kBugCaught] + counts[Outcome::kFaultHandled];
  std::string md = fmt::format("# sharebench run {}\n\n**{}** · {} · {} as expected ({}) · "
                               "{} skipped · {} interrupted · **{} unexpected** · started {}\n\n",
                               run.run_id, run.status, counted(static_cast<long long>(run.cells.size()), "cell", "cells"),
                               green, counted(counts[Outcome::kBugCaught], "planted bug caught", "planted bugs caught"),
                               counts[Outcome::kSkipped], counts[Outcome::kInterrupted], counts[Outcome::kUnexpected],
                               run.started_at);
  if (!run.stop_reason.empty()) md += fmt::format("> The run stopped: {}\n\n", code(run.stop_reason));
  if (run.shard.total > 1) {
    md += fmt::format("> Shard {}/{} of a matrix of {} cells.\n\n", run.shard.index, run.shard.total, run.shard.planned_cells);
  }
  if (const std::string line = measurement_conditions_line(run); !line.empty()) {
    md += fmt::format("Measured under: {}.\n\n", cell_text(line));
  }
  for (const std::string& w : measurement_warnings(run)) md += fmt::format("> ⚠️ Warning: {}.\n\n", cell_text(w));
  md += render_recommendation_markdown(run);

  if (counts[Outcome::kUnexpected] > 0) {
    md += "## Failures\n\n";
    for (const auto& c : run.cells) {
      const CellOutcome o = c.outcome();
      if (o.kind != Outcome::kUnexpected) continue;
      md += fmt::format("### {}\n\n{}.\n\n", code(c.config.id()), cell_text(o.summary));
      for (const Repetition* r : unexpected_repetitions(c)) {
        if (!r->diagnosis.empty()) md += fmt::format("- **diagnosis** (repetition {}): {}\n", r->index, cell_text(r->diagnosis));
      }
      for (const Evidence& e : o.evidence) {
        md += fmt::format("- **{}** {} (repetition {}): {}\n", e.verdict, code(e.check), e.repetition, cell_text(e.message));
      }
      for (const Repetition* r : unexpected_repetitions(c)) {
        if (r->status != RunStatus::kCompleted) {
          md += fmt::format("- repetition {} status **{}**: {}\n", r->index, to_string(r->status), cell_text(r->status_message));
        }
        for (const auto& w : r->workers) {
          if (!w.stall.empty()) md += fmt::format("- rank {} stuck: {}\n", w.rank, cell_text(w.stall));
          if (!w.stacks.empty()) {
            md += fmt::format("\n<details><summary>rank {} stacks</summary>\n\n{}</details>\n\n", w.rank, fenced(w.stacks));
          }
          if (!w.error.empty()) md += fmt::format("- rank {} said: {}\n", w.rank, cell_text(w.error));
          if (!w.stderr_tail.empty()) {
            md += fmt::format("\n<details><summary>rank {} stderr</summary>\n\n{}</details>\n\n", w.rank, fenced(w.stderr_tail));
          }
        }
      }
      md += fmt::format("\nReproduce:\n\n{}\n", fenced(c.repro, "sh"));
    }
  }

  std::string notes;
  for (const auto& c : run.cells) {
    for (const std::string& n : distinct_notes(c)) notes += fmt::format("- {}: {}\n", code(c.config.id()), cell_text(n));
  }
  if (!notes.empty()) md += "## Notes\n\n" + notes + "\n";
  if (const auto vacuous = unexercised_checks(run); !vacuous.empty()) {
    md += "## Not exercised\n\nThese checks held only because the situation they guard against never arose "
          "(raise `--steps` or `--procs`; the check's message says what was counted):\n\n";
    for (const auto& [name, cells] : vacuous) {
      std::string list;
      for (const std::string& id : cells) list += (list.empty() ? "" : ", ") + code(id);
      md += fmt::format("- {} in {} cell(s): {}\n", code(name), cells.size(), list);
    }
    md += "\n";
  }

  if (counts[Outcome::kBugCaught] + counts[Outcome::kFaultHandled] > 0) {
    md += "## Evidence\n\n| cell | caught by | evidence |\n|---|---|---|\n";
    for (const auto& c : run.cells) {
      const CellOutcome o = c.outcome();
      if (o.kind != Outcome::kBugCaught && o.kind != Outcome::kFaultHandled) continue;
      for (const Evidence& e : o.evidence) {
        md += fmt::format("| {} | {} | {} |\n", code(c.config.id()), code(e.check), cell_text(e.message));
      }
    }
    md += "\n";
  }

  md += "## Cells\n\n| cell | result | steps/s | samples/s | held-out loss | serial | lock wait | lost | sync | launch (ms) |\n"
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n";
  for (const auto& c : run.cells) {
    const CellOutcome o = c.outcome();
    std::string result = badge(o.kind);
    if (o.kind == Outcome::kSkipped || o.kind == Outcome::kInterrupted) result += ": " + cell_text(o.reason);
    const auto share = [&c](const char* metric) {
      const double v = cell_mean(c, metric);
      return std::isnan(v) ? std::string("–") : fmt::format("{:.0f}%", v * 100);
    };
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", code(c.config.id()), result,
                      num(cell_mean(c, "steps_per_s"), 0), num(cell_mean(c, "samples_per_s"), 0),
                      num(cell_mean(c, "heldout_loss"), 3), num(cell_mean(c, "serial_heldout_loss"), 3),
                      share("lock_wait_frac"), share("lost_update_rate"), share("sync_frac"),
                      num(cell_mean(c, "launch_s_max") * 1000, 1));
  }
  md += "\n## Environment\n\n| | |\n|---|---|\n";
  for (const auto& [k, v] : run.environment) md += fmt::format("| {} | {} |\n", k, cell_text(v));
  return md;
}

}  // namespace sharebench
