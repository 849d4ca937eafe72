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
#include "reports/markdown_text.h"
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

}  // namespace

std::string render_markdown(const RunResult& run) {
  std::map<Outcome, int> counts;
  for (const auto& c : run.cells) ++counts[c.outcome().kind];
  const int green = counts[Outcome::kOk] + counts[Outcome::kBugCaught] + counts[Outcome::kFaultHandled];
  std::string md = fmt::format("# sharebench run {}\n\n**{}** · {} · {} as expected ({}) · "
                               "{} skipped · {} interrupted · **{} unexpected** · started {}\n\n",
                               markdown::text(run.run_id), markdown::text(run.status),
                               counted(static_cast<long long>(run.cells.size()), "cell", "cells"),
                               green, counted(counts[Outcome::kBugCaught], "planted bug caught", "planted bugs caught"),
                               counts[Outcome::kSkipped], counts[Outcome::kInterrupted], counts[Outcome::kUnexpected],
                               markdown::text(run.started_at));
  if (!run.stop_reason.empty()) md += fmt::format("> The run stopped: {}\n\n", markdown::code(run.stop_reason));
  if (run.shard.total > 1) {
    md += fmt::format("> Shard {}/{} of a matrix of {} cells.\n\n", run.shard.index, run.shard.total, run.shard.planned_cells);
  }
  if (const std::string line = measurement_conditions_line(run); !line.empty()) {
    md += fmt::format("Measured under: {}.\n\n", markdown::text(line));
  }
  for (const std::string& w : measurement_warnings(run)) md += fmt::format("> ⚠️ Warning: {}.\n\n", markdown::text(w));
  md += render_recommendation_markdown(run);

  if (counts[Outcome::kUnexpected] > 0) {
    md += "## Failures\n\n";
    for (const auto& c : run.cells) {
      const CellOutcome o = c.outcome();
      if (o.kind != Outcome::kUnexpected) continue;
      md += fmt::format("### {}\n\n{}.\n\n", markdown::code(c.config.id()), markdown::text(o.summary));
      for (const Repetition* r : unexpected_repetitions(c)) {
        if (!r->diagnosis.empty()) md += fmt::format("- **diagnosis** (repetition {}): {}\n", r->index, markdown::text(r->diagnosis));
      }
      for (const Evidence& e : o.evidence) {
        md += fmt::format("- **{}** {} (repetition {}): {}\n", e.verdict, markdown::code(e.check), e.repetition, markdown::text(e.message));
      }
      for (const Repetition* r : unexpected_repetitions(c)) {
        if (r->status != RunStatus::kCompleted) {
          md += fmt::format("- repetition {} status **{}**: {}\n", r->index, to_string(r->status), markdown::text(r->status_message));
        }
        for (const auto& w : r->workers) {
          if (!w.stall.empty()) md += fmt::format("- rank {} stuck: {}\n", w.rank, markdown::text(w.stall));
          if (!w.stacks.empty()) {
            md += fmt::format("\n<details><summary>rank {} stacks</summary>\n\n{}</details>\n\n", w.rank, markdown::fenced(w.stacks));
          }
          if (!w.error.empty()) md += fmt::format("- rank {} said: {}\n", w.rank, markdown::text(w.error));
          if (!w.stderr_tail.empty()) {
            md += fmt::format("\n<details><summary>rank {} stderr</summary>\n\n{}</details>\n\n", w.rank, markdown::fenced(w.stderr_tail));
          }
        }
      }
      md += fmt::format("\nReproduce:\n\n{}\n", markdown::fenced(c.repro, "sh"));
    }
  }

  std::string notes;
  for (const auto& c : run.cells) {
    for (const std::string& n : distinct_notes(c)) notes += fmt::format("- {}: {}\n", markdown::code(c.config.id()), markdown::text(n));
  }
  if (!notes.empty()) md += "## Notes\n\n" + notes + "\n";
  if (const auto vacuous = unexercised_checks(run); !vacuous.empty()) {
    md += "## Not exercised\n\nThese checks held only because the situation they guard against never arose "
          "(raise `--steps` or `--procs`; the check's message says what was counted):\n\n";
    for (const auto& [name, cells] : vacuous) {
      std::string list;
      for (const std::string& id : cells) list += (list.empty() ? "" : ", ") + markdown::code(id);
      md += fmt::format("- {} in {} cell(s): {}\n", markdown::code(name), cells.size(), list);
    }
    md += "\n";
  }

  if (counts[Outcome::kBugCaught] + counts[Outcome::kFaultHandled] > 0) {
    md += "## Evidence\n\n| cell | caught by | evidence |\n|---|---|---|\n";
    for (const auto& c : run.cells) {
      const CellOutcome o = c.outcome();
      if (o.kind != Outcome::kBugCaught && o.kind != Outcome::kFaultHandled) continue;
      for (const Evidence& e : o.evidence) {
        md += fmt::format("| {} | {} | {} |\n", markdown::code(c.config.id()), markdown::code(e.check), markdown::text(e.message));
      }
    }
    md += "\n";
  }

  md += "## Cells\n\n| cell | result | steps/s | samples/s | held-out loss | serial | lock wait | lost | sync | launch (ms) |\n"
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n";
  for (const auto& c : run.cells) {
    const CellOutcome o = c.outcome();
    std::string result = badge(o.kind);
    if (o.kind == Outcome::kSkipped || o.kind == Outcome::kInterrupted) result += ": " + markdown::text(o.reason);
    const auto share = [&c](const char* metric) {
      const double v = cell_mean(c, metric);
      return std::isnan(v) ? std::string("–") : fmt::format("{:.0f}%", v * 100);
    };
    md += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", markdown::code(c.config.id()), result,
                      num(cell_mean(c, "steps_per_s"), 0), num(cell_mean(c, "samples_per_s"), 0),
                      num(cell_mean(c, "heldout_loss"), 3), num(cell_mean(c, "serial_heldout_loss"), 3),
                      share("lock_wait_frac"), share("lost_update_rate"), share("sync_frac"),
                      num(cell_mean(c, "launch_s_max") * 1000, 1));
  }
  md += "\n## Environment\n\n| | |\n|---|---|\n";
  for (const auto& [k, v] : run.environment) md += fmt::format("| {} | {} |\n", markdown::text(k), markdown::text(v));
  return md;
}

}  // namespace sharebench
