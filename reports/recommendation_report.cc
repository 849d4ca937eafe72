// The recommendation in words, for the console and Markdown reports.
#include "reports/recommendation_report.h"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "harness/util/text.h"
#include "reports/markdown_text.h"

namespace sharebench {

namespace {

std::string budget_text(double s) {
  if (s >= 120 && std::fmod(s, 60) == 0) return fmt::format("{:.0f} min", s / 60);
  return fmt::format("{:.0f} s", s);
}

std::string versus_leader_text(const MeanInterval& m) {
  if (!m.bounded()) return fmt::format("{}{} (no interval)", m.mean >= 0 ? "+" : "", percent_text(m.mean));
  return fmt::format("{}{} ± {}", m.mean >= 0 ? "+" : "", percent_text(m.mean), percent_text((m.hi - m.lo) / 2));
}

// The A/A control of a group ranked by blocks, in words.
std::string control_text(const RankingGroup& g) {
  if (!g.control) return "";
  const BlockControl& c = *g.control;
  return fmt::format("A/A control: {} against itself {} over {}{}; tie margin {}", c.strategy,
                     versus_leader_text(c.difference), counted(c.difference.n, "block", "blocks"),
                     c.false_difference() ? " (a false difference: this run's intervals are too narrow; the margin absorbs it)" : "",
                     percent_text(g.tie_margin));
}

std::string interval_text(const MeanInterval& m) {
  if (!m.bounded()) return "no interval";
  return "±" + percent_text(m.relative_half_width());
}

std::string tie_margin_text(const RepetitionPolicy& p) {
  if (p.tie_margin <= 0) return "ties: overlapping intervals only (--tie-margin 0)";
  return fmt::format("ties: overlapping intervals, or means within {} of the fastest's (the tie margin: the drift from "
                     "run to run, which no interval holds)", percent_text(p.tie_margin));
}

}  // namespace

std::string repetition_policy_line(const RunResult& run) {
  const RepetitionPolicy& p = run.repetitions;
  if (p.blocks) {
    std::string line = p.blocks_adaptive
                           ? fmt::format("ranked in blocks: at least {} per group, more until its leader is told apart (at "
                                         "most {}, within the {} budget)", p.blocks_min, p.blocks_max, budget_text(p.budget_s))
                           : fmt::format("ranked in {}", counted(p.blocks_min, "block", "blocks"));
    if (p.blocks_ran >= 0 && p.blocks_ran < p.blocks_min && run.status == "interrupted") {
      line = fmt::format("ranked in {} of the {} asked for: the run was interrupted (an incomplete block does not count)",
                         counted(p.blocks_ran, "block", "blocks"), p.blocks_min);
    }
    line += "; in each block every contender ran once in a fresh random order and the fastest twice (the A/A control); "
            "a strategy's figure is its ratio to the leader's in the same block";
    line += p.tie_margin_given ? fmt::format("; ties: intervals that reach the leader, or reach within {} of it (--tie-margin)",
                                             percent_text(p.tie_margin))
                               : "; ties: intervals that reach the leader, or reach within the A/A control's margin of it";
    if (p.budget_ran_out) line += "; the budget ran out before every leader was told apart";
    return line;
  }
  if (!p.automatic) {
    return p.fixed == 1 ? "1 repetition per cell: no intervals, so nothing can be told from noise "
                          "(--repetitions auto --budget 10m repeats each cell until it can)"
                        : fmt::format("{} repetitions per cell, 95 % intervals from their spread; {}", p.fixed,
                                      tie_margin_text(p));
  }
  std::string line = fmt::format("repetitions: auto, each ranked cell until its 95 % interval is within ±{} of its mean "
                                 "or the {} budget ends; at least {:.1f} s of timed work per repetition, warm-up excluded",
                                 percent_text(p.target), budget_text(p.budget_s), p.min_timed_s);
  line += "; " + tie_margin_text(p);
  if (p.budget_ran_out) line += "; the budget ran out before every cell settled (marked 'not settled')";
  return line;
}

std::string exclusions_line(const Recommendation& rec) {
  std::map<std::string, int> counts;
  for (const Exclusion& e : rec.excluded) ++counts[e.category];
  std::string line;
  for (const auto& [category, n] : counts) {
    std::string what = category;
    if (category == "not throughput") what = "not throughput (lock, fork-safety or a program)";
    if (n != 1 && (category == "planted bug" || category == "fault")) what += "s";
    line += fmt::format("{}{} {}", line.empty() ? "" : ", ", n, what);
  }
  return line;
}

std::string ranked_figures(const RankedCell& r, const std::string& unit) {
  std::string s = fmt::format("{:.0f} {} {} ({} rep{})", r.rate.mean, unit, interval_text(r.rate), r.rate.n,
                              r.rate.n == 1 ? "" : "s");
  if (!r.settled && r.rate.bounded()) s += ", not settled";
  if (r.uss_mb > 0) s += fmt::format(", {:.0f} MiB/worker", r.uss_mb);
  if (r.launch_ms > 0) s += fmt::format(", launch {:.0f} ms", r.launch_ms);
  return s;
}

std::string ranked_figures(const RankedStrategy& s, const std::string& unit) {
  if (s.vs_leader.n > 0) {  // ranked by blocks
    std::string out = fmt::format("{:.0f} {} {} ({}, {})", s.rate.mean, unit, interval_text(s.rate),
                                  counted(s.rate.n, "block", "blocks"), to_string(s.start));
    if (s.vs_leader.mean != 0 || s.vs_leader.hi != 0) out += fmt::format(", {} against the leader", versus_leader_text(s.vs_leader));
    if (s.uss_mb > 0) out += fmt::format(", {:.0f} MiB/worker", s.uss_mb);
    if (s.launch_ms > 0) out += fmt::format(", launch {:.0f} ms", s.launch_ms);
    return out;
  }
  std::string reps = fmt::format("{} rep{}", s.rate.n, s.rate.n == 1 ? "" : "s");
  if (s.starts.size() > 1) {
    std::string starts;
    for (const std::string& st : s.starts) starts += (starts.empty() ? "" : ", ") + st;
    reps += s.pooled                ? fmt::format(": {} pooled", starts)
            : !s.rate.bounded() ? fmt::format(", {}'s: the fastest of one run each", s.starts.front())
                                : fmt::format(", {} alone: start methods differ", s.starts.front());
  } else {
    reps += ", " + s.starts.front();
  }
  std::string out = fmt::format("{:.0f} {} {} ({})", s.rate.mean, unit, interval_text(s.rate), reps);
  if (!s.settled && s.rate.bounded()) out += ", not settled";
  if (s.uss_mb > 0) out += fmt::format(", {:.0f} MiB/worker", s.uss_mb);
  if (s.launch_ms > 0) out += fmt::format(", launch {:.0f} ms under {}", s.launch_ms, to_string(s.start));
  return out;
}

std::string group_title(const RankingGroup& g) {
  return fmt::format("{}, {} process{} ({}, batch {})", to_string(g.kind), g.procs, g.procs == 1 ? "" : "es", g.model,
                     g.batch);
}

// The console's legend: what the marks and figures of the rows mean, in one line.
std::string recommendation_legend(const RunResult& run) {
  return run.repetitions.blocks ? "± 95 % interval · × speed against the leader, block by block · = tied · ≈ within the A/A margin"
                                : "± 95 % interval · = tied with the fastest (intervals overlap) · ≈ within the tie margin";
}

// How the run ranked, short: the long form is --explain's (repetition_policy_line).
std::string repetition_policy_short(const RunResult& run) {
  const RepetitionPolicy& p = run.repetitions;
  if (!p.blocks) return repetition_policy_line(run);
  if (p.blocks_ran >= 0 && p.blocks_ran < p.blocks_min && run.status == "interrupted") {
    return fmt::format("ranked in {} of the {} asked for: the run was interrupted", counted(p.blocks_ran, "block", "blocks"),
                       p.blocks_min);
  }
  std::string line = p.blocks_adaptive ? fmt::format("blocks: {} to {} per group in a {} budget", p.blocks_min, p.blocks_max,
                                                     budget_text(p.budget_s))
                                       : fmt::format("blocks: {} per group", p.blocks_min);
  return line + (p.budget_ran_out ? ", which ran out first" : "");
}

namespace {

// The A/A control in a few words: "A/A control +1.5 % ± 5.1 %, tie margin 2.0 %".
std::string control_short(const RankingGroup& g) {
  if (!g.control) return "";
  return fmt::format("A/A control {}, tie margin {}{}", versus_leader_text(g.control->difference), percent_text(g.tie_margin),
                     g.control->false_difference() ? " (a false difference: the margin absorbs it)" : "");
}

// One strategy's row under its group: mark, name, rate ± interval, speed against the leader,
// memory per worker, launch.
std::string strategy_row(const RankedStrategy& s, const RankingGroup& g, bool leader) {
  if (s.vs_leader.n == 0) return fmt::format("  {:<1} {:<26} {}", tie_mark(s), s.strategy, ranked_figures(s, g.unit));
  std::string row = fmt::format("  {:<1} {:<26} {:>6.0f} {} {:<7} {:<14}", tie_mark(s), s.strategy, s.rate.mean, g.unit,
                                interval_text(s.rate), leader ? "fastest" : ratio_text(s.vs_leader));
  if (s.uss_mb > 0) row += fmt::format(" {:>4.0f} MiB", s.uss_mb);
  if (s.launch_ms > 0) row += fmt::format("  launch {:.0f} ms", s.launch_ms);
  while (!row.empty() && row.back() == ' ') row.pop_back();
  return row;
}

}  // namespace

std::string render_recommendation_console(const RunResult& run, int top, bool explain) {
  const Recommendation rec = recommend(run);
  std::string out = "Recommendation: per kind of work and process count, the fastest strategies that passed every check\n";
  if (explain) {
    out += run.repetitions.blocks ? "  = tied: the 95 % interval of its ratio to the fastest, block by block, reaches 0; ≈ tied: that "
                                    "interval reaches within the tie margin\n"
                                  : "  = tied: 95 % intervals overlap the fastest's; ≈ tied: mean within the tie margin of it; a "
                                    "strategy's start methods are pooled unless told apart\n";
    out += "  " + repetition_policy_line(run) + "\n";
    out += "  MiB: the private memory of the largest worker; launch: from the launch call until the slowest worker was ready\n";
  } else {
    out += "  " + recommendation_legend(run) + "\n  " + repetition_policy_short(run) + " (--explain: how)\n";
  }
  if (rec.empty()) out += "  nothing to rank: no cell of training, inference or messages passed every check\n";
  // One repetition per cell: no intervals, so the ranked lists would only repeat the tables below.
  if (!run.repetitions.automatic && !run.repetitions.blocks && run.repetitions.fixed < 2) top = 0;
  for (const RankingGroup& g : rec.groups) {
    out += fmt::format("{}{}\n", group_title(g), g.blocks > 0 ? ", " + counted(g.blocks, "block", "blocks") : "");
    out += "  " + g.verdict + "\n";
    if (!g.budget_note.empty()) out += "  " + g.budget_note + "\n";
    if (top > 0 && g.strategies.size() >= 2) {
      int shown = 0;
      for (const RankedStrategy& s : g.strategies) {
        if (shown == top) {
          out += fmt::format("    … {} more (report.md, results.json)\n", g.strategies.size() - shown);
          break;
        }
        out += strategy_row(s, g, shown == 0) + "\n";
        ++shown;
      }
    }
    if (g.control) out += "  " + (explain ? control_text(g) : control_short(g)) + "\n";
    out += "  start methods: " + g.start_methods + "\n";
  }
  if (!rec.excluded.empty()) out += "not ranked: " + exclusions_line(rec) + "\n";
  return wrapped(out, kConsoleWidth);
}

std::string render_recommendation_markdown(const RunResult& run) {
  const Recommendation rec = recommend(run);
  std::string out = "## Recommendation\n\nThe fastest strategies that passed every check and converged, by kind of work and "
                    "process count. Strategies marked = are tied with the fastest: their 95 % intervals overlap; those marked ≈ are "
                    "tied through the tie margin: their intervals part, but their mean is within the margin of the fastest's "
                    "(the run-to-run drift of a machine like this one). A "
                    "strategy's start methods are pooled unless two were told apart, their intervals apart after 6 "
                    "repetitions each (a start method changes how a worker begins, not the loop it runs); the report "
                    "advises one only where they were told apart.\n\n";
  out += markdown::text(repetition_policy_line(run)) + ".\n\n";
  if (rec.empty()) out += "Nothing to rank: no cell of training, inference or messages passed every check.\n\n";
  for (const RankingGroup& g : rec.groups) {
    const std::string control = g.control ? markdown::text(control_text(g)) + ".\n\n" : "";
    out += fmt::format("**{}**: {}{}. Start methods: {}.\n\n{}| | strategy | start | {} | 95 % interval | reps | start methods | MiB/worker | launch ms |\n"
                       "|---|---|---|---:|---|---:|---|---:|---:|\n",
                       markdown::text(group_title(g)), markdown::text(g.verdict),
                       g.budget_note.empty() ? "" : "; " + markdown::text(g.budget_note), markdown::text(g.start_methods), control,
                       g.unit);
    for (const RankedStrategy& s : g.strategies) {
      std::string starts;
      for (const std::string& st : s.starts) starts += (starts.empty() ? "" : ", ") + st;
      if (s.starts.size() > 1) starts += s.pooled ? " (pooled)" : " (differ)";
      out += fmt::format("| {} | {} | {} | {:.0f} | {}{} | {} | {} | {} | {} |\n", tie_mark(s), markdown::text(s.strategy),
                         to_string(s.start), s.rate.mean, interval_text(s.rate),
                         s.settled || !s.rate.bounded() ? "" : " (not settled)", s.rate.n, starts,
                         s.uss_mb > 0 ? fmt::format("{:.0f}", s.uss_mb) : "-", s.launch_ms > 0 ? fmt::format("{:.0f}", s.launch_ms) : "-");
    }
    out += fmt::format("\n<details><summary>Every cell of {}</summary>\n\n| | cell | {} | 95 % interval | reps | MiB/worker | launch ms |\n"
                       "|---|---|---:|---|---:|---:|---:|\n",
                       markdown::text(group_title(g)), g.unit);
    for (const RankedCell& r : g.ranked) {
      out += fmt::format("| {} | {} | {:.0f} | {}{} | {} | {} | {} |\n", tie_mark(r), markdown::text(r.cell), r.rate.mean,
                         interval_text(r.rate), r.settled || !r.rate.bounded() ? "" : " (not settled)", r.rate.n,
                         r.uss_mb > 0 ? fmt::format("{:.0f}", r.uss_mb) : "-",
                         r.launch_ms > 0 ? fmt::format("{:.0f}", r.launch_ms) : "-");
    }
    out += "\n</details>\n\n";
  }
  if (!rec.excluded.empty()) {
    out += fmt::format("<details><summary>Not ranked: {}</summary>\n\n", markdown::text(exclusions_line(rec)));
    for (const Exclusion& e : rec.excluded) out += fmt::format("- {}: {}\n", markdown::text(e.cell), markdown::text(e.why));
    out += "\n</details>\n\n";
  }
  return out;
}

}  // namespace sharebench
