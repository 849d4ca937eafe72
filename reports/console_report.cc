// Console report writer: one table per scenario kind (its own columns and units), then the
// evidence of every caught bug, the details of every unexpected cell with the command that re-runs
// it, the skipped cells with their reasons, and the environment. It formats each cell's outcome
// (harness/results/outcome.h) and decides nothing itself.
#include "reports/console_report.h"
#include "harness/util/text.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include <fmt/color.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/env/environment.h"
#include "reports/recommendation_report.h"
#include "reports/report_writers.h"
#include "reports/terminal_safe.h"

namespace sharebench {

namespace {
// Stack lines shown per worker on the console; the results file keeps them all.
constexpr int kMaxStackLines = 40;
// Lines of a failed worker's stderr shown on the console.
constexpr int kMaxStderrLines = 12;

std::optional<double> mean_metric(const CellResult& c, const std::string& name) {
  const double v = cell_mean(c, name);
  return std::isnan(v) ? std::nullopt : std::optional<double>(v);
}

std::string fixed(const std::optional<double>& v, int precision) {
  return v ? fmt::format("{:.{}f}", *v, precision) : "-";
}

std::string percent(const std::optional<double>& v) { return v ? fmt::format("{:.0f}%", *v * 100) : "-"; }
std::string ms(const std::optional<double>& s) { return s ? fmt::format("{:.0f} ms", *s * 1000) : "-"; }

struct Column {
  const char* title;
  int width;
  std::function<std::string(const CellResult&)> value;
};

// A rate, marked "~" when its timed region was too short to mean much.
std::function<std::string(const CellResult&)> rate(const char* metric) {
  return [metric](const CellResult& c) {
    const std::string v = fixed(mean_metric(c, metric), 0);
    return v != "-" && timed_region_too_short(c) ? "~" + v : v;
  };
}

std::vector<Column> columns_for(ScenarioKind kind) {
  const Column launch{"LAUNCH", 9, [](const CellResult& c) { return ms(mean_metric(c, "launch_s_max")); }};
  const Column lockwait{"LOCKWAIT", 9, [](const CellResult& c) { return percent(mean_metric(c, "lock_wait_frac")); }};
  // A worker's private memory (peak USS of the largest worker): what each worker really adds.
  const Column memory{"USS/WORKER", 11, [](const CellResult& c) {
                        const auto v = mean_metric(c, "worker_uss_mb_peak");
                        return v ? fmt::format("{:.0f} MiB", *v) : "-";
                      }};
  switch (kind) {
    case ScenarioKind::kTraining:
      return {{"STEPS/S", 9, rate("steps_per_s")},
              {"SAMPLES/S", 10, rate("samples_per_s")},
              {"LOSS (SERIAL)", 15,
               [](const CellResult& c) {
                 const auto loss = mean_metric(c, "heldout_loss");
                 return loss ? fmt::format("{:.3f} ({})", *loss, fixed(mean_metric(c, "serial_heldout_loss"), 3)) : "-";
               }},
              lockwait,
              // Lock-free training: the share of steps whose update an overlap lost (Hogwild's figure).
              {"LOST", 6, [](const CellResult& c) { return percent(mean_metric(c, "lost_update_rate")); }},
              // a3c: the share of worker time spent pulling the shared parameters into the replica.
              {"SYNC", 6, [](const CellResult& c) { return percent(mean_metric(c, "sync_frac")); }},
              memory, launch};
    case ScenarioKind::kInference:
      return {{"BATCHES/S", 10, rate("steps_per_s")},
              {"SAMPLES/S", 10, rate("samples_per_s")},
              {"P50 US", 8, [](const CellResult& c) { return fixed(mean_metric(c, "latency_p50_us"), 0); }},
              {"P99 US", 8, [](const CellResult& c) { return fixed(mean_metric(c, "latency_p99_us"), 0); }},
              memory, launch};
    case ScenarioKind::kMessages:
      return {{"MSGS/S", 9, rate("messages_per_s")},
              {"GB/S", 7, [](const CellResult& c) { return fixed(mean_metric(c, "gb_per_s"), 2); }},
              memory, launch};
    case ScenarioKind::kLockOnly:
      return {{"OPS/S", 9, rate("steps_per_s")}, lockwait, memory, launch};
    case ScenarioKind::kProgram:  // a user's program under `exec`: its steps/s (when it beats) and its tree
      return {{"STEPS/S", 9, rate("steps_per_s")},
              {"PROCS", 6, [](const CellResult& c) { return fixed(mean_metric(c, "processes"), 0); }},
              {"CPU S", 7, [](const CellResult& c) { return fixed(mean_metric(c, "cpu_s"), 1); }},
              {"PSS TOTAL", 10, [](const CellResult& c) {
                 const auto v = mean_metric(c, "tree_pss_mb_peak");
                 return v ? fmt::format("{:.0f} MiB", *v) : "-";
               }},
              {"USS/PROC", 9, [](const CellResult& c) {
                 const auto v = mean_metric(c, "worker_uss_mb_peak");
                 return v ? fmt::format("{:.0f} MiB", *v) : "-";
               }},
              {"WALL S", 7, [](const CellResult& c) { return fixed(mean_metric(c, "program_s"), 1); }}};
  }
  return {launch};
}

// A process's command line as a reader wants it in a table: multiprocessing's own processes by what
// they are, anything else without the interpreter's directory.
std::string short_command(const std::string& command) {
  if (command.find("multiprocessing.resource_tracker") != std::string::npos) return "(mp resource tracker)";
  if (command.find("multiprocessing.forkserver") != std::string::npos) return "(mp forkserver or its worker)";
  if (command.find("multiprocessing.spawn") != std::string::npos) return "(mp spawned worker)";
  const std::size_t space = command.find(' ');
  const std::size_t slash = command.rfind('/', space);
  return slash == std::string::npos ? command : command.substr(slash + 1);
}

std::string kind_title(ScenarioKind k) {
  switch (k) {
    case ScenarioKind::kTraining: return "training";
    case ScenarioKind::kInference: return "inference";
    case ScenarioKind::kMessages: return "messages";
    case ScenarioKind::kLockOnly: return "lock-only";
    case ScenarioKind::kProgram: return "programs (sharebench exec)";
  }
  return "";
}

class Painter {
 public:
  explicit Painter(bool on) : on_(on) {}
  std::string operator()(fmt::text_style style, const std::string& text) const {
    return on_ ? fmt::format(style, "{}", text) : text;
  }
  fmt::text_style of(Outcome o) const {
    switch (o) {
      case Outcome::kOk: return fmt::fg(fmt::terminal_color::green);
      case Outcome::kBugCaught:
      case Outcome::kFaultHandled: return fmt::fg(fmt::terminal_color::cyan);
      case Outcome::kSkipped:
      case Outcome::kInterrupted: return fmt::fg(fmt::terminal_color::yellow);
      case Outcome::kUnexpected: return fmt::emphasis::bold | fmt::fg(fmt::terminal_color::red);
    }
    return {};
  }

 private:
  bool on_;
};

// Up to `max_lines` lines of `text`, indented; the rest is in results.json.
void append_lines(std::string& out, const std::string& text, int max_lines) {
  std::size_t start = 0;
  int lines = 0;
  while (start < text.size() && lines < max_lines) {
    const std::size_t end = text.find('\n', start);
    out += "      " + text.substr(start, end - start) + "\n";
    start = end == std::string::npos ? text.size() : end + 1;
    ++lines;
  }
  if (start < text.size()) out += "      ... (all of it in results.json)\n";
}

std::string last_text_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  const auto nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

void append_stacks(std::string& out, const WorkerRecord& w) {
  out += fmt::format("    rank {} stacks:\n", w.rank);
  append_lines(out, w.stacks, kMaxStackLines);
}
}  // namespace

// What exec checked in a program's repetition, one line a check as pytest's summary does: failures
// first, then unknown, not exercised, pass; each with what it saw (its exposure). The failures'
// full messages follow in the UNEXPECTED section.
std::string program_checks(const std::string& id, const Repetition& r, const Painter& paint) {
  auto order = [](Verdict v) {
    switch (v) {
      case Verdict::kFail: return 0;
      case Verdict::kUnknown: return 1;
      case Verdict::kNotExercised: return 2;
      case Verdict::kPass: return 3;
    }
    return 3;
  };
  std::vector<const Check*> sorted;
  for (const Check& c : r.checks) sorted.push_back(&c);
  std::stable_sort(sorted.begin(), sorted.end(), [&](const Check* a, const Check* b) { return order(a->verdict) < order(b->verdict); });
  std::string out = fmt::format("\nChecks of {}:\n", id);
  for (const Check* c : sorted) {
    std::string saw = "-";
    if (c->exposure) {
      saw = c->exposure->count > 0 ? fmt::format("{:.0f} {}", c->exposure->count, c->exposure->what)
                                   : fmt::format("no {}", c->exposure->what);
    }
    const std::string word = c->verdict == Verdict::kFail           ? std::string("FAIL")
                             : c->verdict == Verdict::kNotExercised ? std::string("not exercised")
                                                                    : to_string(c->verdict);
    const auto style = c->verdict == Verdict::kFail ? paint.of(Outcome::kUnexpected)
                       : c->verdict == Verdict::kPass ? paint.of(Outcome::kOk)
                                                      : paint.of(Outcome::kSkipped);
    out += fmt::format("  {} {:<24} {}\n", paint(style, fmt::format("{:<14}", word)), c->name, saw);
  }
  return out;
}

// exec's first screen: each program's result, then each check that went against it, one line each,
// cut to the terminal's width (the whole message follows, with the evidence, below the tables).
std::string program_verdicts(const RunResult& run, const Painter& paint) {
  std::string out;
  for (const CellResult& c : run.cells) {
    const CellOutcome o = c.outcome();
    out += fmt::format("{}: {}\n", c.config.id(), paint(paint.of(o.kind), outcome_word(o.kind)));
    std::set<std::string> said;
    for (const Evidence& e : o.evidence) {
      if (!said.insert(e.check).second) continue;
      out += "  " + truncated_line(fmt::format("{} {}: {}", e.verdict, e.check, e.message), kConsoleWidth - 2) + "\n";
    }
  }
  return out;
}

std::string render_console(const RunResult& raw, const RenderOptions& options) {
  RunResult run = raw;  // what came from a program or a foreign results file, shown, never obeyed
  make_terminal_safe(run);
  const Painter paint(options.colour);
  // A run of programs alone (exec) has nothing to rank: no recommendation block to read past.
  const bool programs_only = !run.cells.empty() && std::all_of(run.cells.begin(), run.cells.end(), [](const CellResult& c) {
    return c.kind == ScenarioKind::kProgram;
  });
  std::string out = programs_only ? program_verdicts(run, paint) : render_recommendation_console(run, 5, options.explain);
  std::map<Outcome, int> counts;
  std::vector<ScenarioKind> kinds;
  for (const CellResult& c : run.cells) {
    if (std::find(kinds.begin(), kinds.end(), c.kind) == kinds.end()) kinds.push_back(c.kind);
  }
  bool any_short = false;
  for (ScenarioKind kind : kinds) {
    const std::vector<Column> cols = columns_for(kind);
    out += "\n";  // after the recommendation, and between the kinds' tables
    if (kinds.size() > 1) out += fmt::format("{}\n", paint(fmt::emphasis::bold, kind_title(kind)));
    out += fmt::format("{:<44} {:<13}", "CELL", "RESULT");
    for (const Column& col : cols) out += fmt::format(" {:>{}}", col.title, col.width);
    out += "\n";
    for (const CellResult& c : run.cells) {
      if (c.kind != kind) continue;
      const CellOutcome o = c.outcome();
      ++counts[o.kind];
      any_short |= timed_region_too_short(c);
      out += fmt::format("{:<44} {}", c.config.id(), paint(paint.of(o.kind), fmt::format("{:<13}", outcome_word(o.kind))));
      for (const Column& col : cols) out += fmt::format(" {:>{}}", col.value(c), col.width);
      out += "\n";
    }
  }
  if (any_short) {
    out += fmt::format("~ timed region under {} s in some repetition: the rate is mostly start-up jitter; raise --steps\n",
                       kMinTimedRegionS);
  }
  // (A program's checks say it in their own lines below, with what would have put each to the test.)
  if (const std::string vacuous = unexercised_summary(run); !vacuous.empty() && !programs_only) {
    out += fmt::format("not exercised (held only because nothing put them to the test; raise --steps or --procs): {}\n",
                       vacuous);
  }

  // A program's processes (exec cells), from its last repetition: who they were, what each used.
  for (const CellResult& c : run.cells) {
    if (c.repetitions.empty() || c.repetitions.back().processes.empty()) continue;
    const Repetition& r = c.repetitions.back();
    out += fmt::format("\nProcesses of {}{}:\n", c.config.id(),
                       c.repetitions.size() > 1 ? fmt::format(" (repetition {})", r.index + 1) : "");
    out += fmt::format("  {:>7} {:<7} {:>6} {:>8} {:>8} {:>8} {:>8}  {:<32} {}\n", "PID", "ROLE", "CPU S", "USS MiB",
                       "PSS MiB", "SHR MiB", "STEPS", "COMMAND", "END");
    constexpr std::size_t kMaxRows = 16;
    for (std::size_t i = 0; i < r.processes.size() && i < kMaxRows; ++i) {
      const ProcessRecord& p = r.processes[i];
      std::string command = short_command(p.command);
      if (command.size() > 32) command = command.substr(0, 29) + "...";
      out += fmt::format("  {:>7} {:<7} {:>6.1f} {:>8.0f} {:>8.0f} {:>8.0f} {:>8}  {:<32} {}\n", p.pid, p.role, p.cpu_s,
                         p.uss_mb_peak, p.pss_mb_peak, p.shared_mb_peak, p.steps, command, p.end);
    }
    if (r.processes.size() > kMaxRows) out += fmt::format("  ... and {} more (results.json)\n", r.processes.size() - kMaxRows);
    for (const ProcessRecord& p : r.processes) {
      if (!p.error.empty()) out += fmt::format("  pid {} raised: {}\n", p.pid, last_text_line(p.error));
    }
    out += program_checks(c.config.id(), r, paint);
  }

  // Observations that are never failures (exec: lost increments, headroom, threads at a fork).
  for (const CellResult& c : run.cells) {
    const std::vector<std::string> notes = distinct_notes(c);
    if (notes.empty()) continue;
    out += fmt::format("\nNotes on {}:\n", c.config.id());
    for (const std::string& n : notes) out += fmt::format("  - {}\n", n);
  }

  // What caught each planted bug, and what ended each fault cell: the evidence, one line each.
  bool header = false;
  for (const CellResult& c : run.cells) {
    const CellOutcome o = c.outcome();
    if ((o.kind != Outcome::kBugCaught && o.kind != Outcome::kFaultHandled) || o.evidence.empty()) continue;
    if (!header) out += "\nEvidence:\n";
    header = true;
    for (const Evidence& e : o.evidence) {
      out += fmt::format("  {} {} by {}: {}\n", paint(paint.of(o.kind), outcome_word(o.kind)), c.config.id(), e.check,
                         e.message);
    }
  }

  for (const CellResult& c : run.cells) {
    const CellOutcome o = c.outcome();
    if (o.kind != Outcome::kUnexpected) continue;
    out += fmt::format("\n{} {}: {}\n", paint(paint.of(o.kind), "UNEXPECTED"), c.config.id(), o.summary);
    for (const Repetition* r : unexpected_repetitions(c)) {
      if (!r->diagnosis.empty()) out += fmt::format("  diagnosis (repetition {}): {}\n", r->index, r->diagnosis);
    }
    for (const Evidence& e : o.evidence) {
      out += fmt::format("  {} {} (repetition {}): {}\n", e.verdict, e.check, e.repetition, e.message);
    }
    for (const Repetition* r : unexpected_repetitions(c)) {
      if (r->status != RunStatus::kCompleted) {
        out += fmt::format("  repetition {} {}: {}\n", r->index, to_string(r->status), r->status_message);
      }
      for (const auto& w : r->workers) {
        if (!w.stall.empty()) out += fmt::format("    rank {} stuck: {}\n", w.rank, w.stall);
        if (!w.stacks.empty()) append_stacks(out, w);
        if (!w.error.empty()) out += fmt::format("    rank {} said: {}\n", w.rank, w.error);
        if (!w.stderr_tail.empty()) {
          out += fmt::format("    rank {} stderr (its end):\n", w.rank);
          append_lines(out, w.stderr_tail, kMaxStderrLines);
        }
      }
    }
    out += fmt::format("  reproduce: {}\n", c.repro);
  }

  // Skipped and interrupted cells, once per distinct reason.
  std::map<std::pair<Outcome, std::string>, std::vector<std::string>> reasons;
  for (const CellResult& c : run.cells) {
    const CellOutcome o = c.outcome();
    if (o.kind == Outcome::kSkipped || o.kind == Outcome::kInterrupted) reasons[{o.kind, o.reason}].push_back(c.config.id());
  }
  for (const auto& [key, ids] : reasons) {
    out += fmt::format("\n{} {}: {}\n", paint(paint.of(key.first), outcome_word(key.first)), fmt::join(ids, ", "), key.second);
  }

  const int green = counts[Outcome::kOk] + counts[Outcome::kBugCaught] + counts[Outcome::kFaultHandled];
  out += fmt::format("\n{}: {} as expected ({} ok, {}, {}), {} skipped, {} interrupted, {} unexpected. Run {}.\n",
                     counted(static_cast<long long>(run.cells.size()), "cell", "cells"), green, counts[Outcome::kOk],
                     counted(counts[Outcome::kBugCaught], "planted bug caught", "planted bugs caught"),
                     counted(counts[Outcome::kFaultHandled], "fault handled", "faults handled"), counts[Outcome::kSkipped],
                     counts[Outcome::kInterrupted], counts[Outcome::kUnexpected], run.status);
  if (!run.stop_reason.empty()) out += fmt::format("The run {}.\n", run.stop_reason);
  if (run.shard.total > 1) {
    out += fmt::format("Shard {}/{}: {} of the matrix's {} cells (join the shards with `sharebench merge`).\n",
                       run.shard.index, run.shard.total, run.cells.size(), run.shard.planned_cells);
  }
  if (const std::string line = measurement_conditions_line(run); !line.empty()) {
    out += fmt::format("Measured under: {}.\n", line);
  }
  for (const std::string& w : measurement_warnings(run)) out += fmt::format("warning: {}.\n", w);
  const bool any_thread_cells = std::any_of(run.cells.begin(), run.cells.end(),
                                            [](const CellResult& c) { return c.config.start == StartMethod::kThread; });
  if (any_thread_cells && blas_unsafe_for_threads(run.environment)) {
    out += fmt::format("warning: this BLAS ({}) is not safe for concurrent calls: cells under --start thread may "
                       "compute wrong results. Install libopenblas0-pthread (ci/setup does).\n",
                       run.environment.at("blas_config"));
  }
  auto env = [&](const char* key) {
    auto it = run.environment.find(key);
    return it == run.environment.end() ? std::string("?") : it->second;
  };
  const bool only_programs = !run.cells.empty() && std::all_of(run.cells.begin(), run.cells.end(), [](const CellResult& c) {
    return c.kind == ScenarioKind::kProgram;
  });
  if (only_programs) {
    // A program sets its own threads: say what its processes used, not what sharebench's workers would.
    double most = 0;
    for (const CellResult& c : run.cells) {
      for (const Repetition& r : c.repetitions) {
        if (auto it = r.metrics.find("intra_op_threads_max"); it != r.metrics.end()) most = std::max(most, it->second);
      }
    }
    out += fmt::format("Machine: {} ({} cores); the program's processes chose their own intra-op threads{}\n",
                       env("cpu_model"), env("cores"), most > 0 ? fmt::format(" (at most {:.0f} in one process)", most) : "");
  } else {
    out += fmt::format("Machine: {} ({} cores), LibTorch {}, {} intra-op thread(s) per worker\nBLAS: {}\n",
                       env("cpu_model"), env("cores"), env("libtorch"), env("threads_per_worker"), env("blas"));
  }
  if (run.environment.count("sharebench_build")) out += fmt::format("Build: {}\n", env("sharebench_build"));
  return out;
}

}  // namespace sharebench
