// The recommendation (harness/results/recommendation.h) as the console and Markdown reports open
// with it: per kind of work and process count, the verdict sentence, then the ranked strategies (and,
// in Markdown, every cell) with their interval, repetitions, memory per worker and launch cost; then
// what was not ranked and why.
// The HTML page draws the same answer from the same function (html_answer.cc).
#pragma once

#include <cstddef>
#include <string>

#include "harness/results/recommendation.h"

namespace sharebench {

// "repetitions: auto until ±5 % or 10 min; 3 cells did not settle" and the like: one line on how
// far the figures can be trusted.
std::string repetition_policy_line(const RunResult& run);
// The console's and the page's one-line legend ("± 95 % interval · × speed against the leader ...")
// and the policy in a few words ("blocks: 5 to 20 per group in a 4 min budget"); the long form is
// repetition_policy_line, for --explain, report.md and results readers.
std::string recommendation_legend(const RunResult& run);
std::string repetition_policy_short(const RunResult& run);
// "12 not throughput (lock or fork-safety), 3 skipped, 6 planted bug": the exclusions counted.
std::string exclusions_line(const Recommendation& rec);
// One ranked cell's figures: "3164 steps/s ±2.1 % (5 reps), 12 MiB/worker, launch 15 ms".
std::string ranked_figures(const RankedCell& r, const std::string& unit);
// One ranked strategy's: "3164 steps/s ±2.1 % (15 reps: fork, spawn, forkserver pooled), 12 MiB/worker,
// launch 15 ms under fork".
std::string ranked_figures(const RankedStrategy& s, const std::string& unit);
// "training, 2 processes (mlp, batch 32)".
std::string group_title(const RankingGroup& g);

// The width the console's recommendation fits (longer lines are wrapped): a terminal of 100 columns.
inline constexpr std::size_t kConsoleWidth = 100;

// The console's opening section: a legend line, then per group its verdict, `top` ranked strategies
// one line each (the rest counted; none with one repetition per cell: the tables below hold the same
// figures, and there are no intervals), the A/A control and the start methods. `explain` gives the
// method in full (--explain) instead of the legend. Every line fits kConsoleWidth.
std::string render_recommendation_console(const RunResult& run, int top, bool explain);
// The Markdown report's opening section: every ranked strategy, every ranked cell (folded), and
// every exclusion in a folded list.
std::string render_recommendation_markdown(const RunResult& run);

}  // namespace sharebench
