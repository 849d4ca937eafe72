// The recommendation: the answer a comparison run gives to "which strategy, start method and
// process count should I use for this model on this machine". Per kind of work (training,
// inference, messages), per process count and model, the cells that passed every check and
// converged are ranked by throughput, each with its 95 % interval over repetitions; the cells whose
// interval overlaps the fastest one's are tied with it, and so are those whose mean is within the
// tie margin of the fastest's (the drift from one run to the next, which no run's interval holds);
// a tie is said as a tie ("not told apart"), never broken by a few per cent of noise. Every cell left out
// is named with the reason. Lock and fork-safety scenarios (ScenarioKind::kLockOnly) and programs
// under exec are never ranked: their "steps" are lock operations or a program's own beats.
// The answer is given per strategy: a start method changes how a worker begins (launch time, memory),
// not the loop it runs, so a strategy's start methods (each measured three times or more) are one
// measurement and their repetitions are pooled unless two of them were told apart (intervals that do
// not overlap after six repetitions each); the start method to use is then the one that launches
// quickest. A strategy whose start methods were told apart is ranked by its fastest one.
// Pure: a function of the results alone, so `sharebench report` on an old file gives the same answer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/results/block_ranking.h"
#include "harness/results/results.h"
#include "harness/util/statistics.h"

namespace sharebench {

// The throughput metric a kind of work is ranked by ("" for kinds never ranked).
std::string ranking_metric(ScenarioKind kind);
std::string ranking_unit(ScenarioKind kind);  // "steps/s", "batches/s", "messages/s"


struct Exclusion {
  std::string cell;
  std::string category;  // "not throughput", "planted bug", "fault", "chaos", "skipped", "interrupted",
                         // "failed", "check undecided", "no convergence verdict", "no figure"
  std::string why;       // one sentence, lower case
};
// Why a cell is not ranked, or nullopt when it is.
std::optional<Exclusion> ranking_exclusion(const CellResult& cell);

// The repetitions whose figures count: every repetition but the calibration pilots of
// --repetitions auto (harness/runner/adaptive_repetitions.h), unless those are all there is.
std::vector<const Repetition*> measured_repetitions(const CellResult& cell);
// The mean of the cell's ranking metric over its measured repetitions, with its 95 % interval.
MeanInterval throughput_interval(const CellResult& cell);

struct RankedCell {
  std::string cell;      // the cell id
  std::string strategy;  // scenario/variant
  StartMethod start = StartMethod::kFork;
  MeanInterval rate;
  bool settled = false;         // the interval is within the run's target width (auto repetitions)
  bool tied_with_best = false;  // its strategy is tied with the fastest, and it is one of that strategy's
                                // start methods that count (all of them when they were pooled)
  bool tied_by_margin = false;  // that tie is through the tie margin alone (its strategy's)
  double uss_mb = 0;            // peak private memory of the largest worker (0: not measured)
  double launch_ms = 0;         // launch to the start barrier, slowest worker (0: not measured)
};

// One strategy in a group: its start methods' cells taken together.
struct RankedStrategy {
  std::string strategy;          // scenario/variant
  MeanInterval rate;             // pooled over its start methods, or its fastest one's when they differ
  bool pooled = true;            // every start method measured 3+ times, no two of them told apart
                                 // (apart after 6+ repetitions each): one measurement
  StartMethod start = StartMethod::kFork;  // the one to use: the quickest launch among those that count
  std::vector<std::string> starts;         // the start methods measured, fastest first
  bool settled = false;          // the rate's interval is within the run's target width
  bool tied_with_best = false;   // its interval overlaps the fastest strategy's (the fastest itself: true), or
                                 // its mean is within the tie margin of the fastest's
  bool tied_by_margin = false;   // tied through the margin alone: the intervals part
  double uss_mb = 0, launch_ms = 0;        // of its cell under `start`
  std::string cell;              // that cell's id
  // Ranked by blocks (block_ranking.h): its rate over its blocks, and its ratio to the leader's
  // rate in the same blocks (- 1); n == 0 when the group ran no blocks.
  MeanInterval vs_leader;
};

struct RankingGroup {
  ScenarioKind kind = ScenarioKind::kTraining;
  int procs = 1;
  std::string model;            // the --model the cells share
  std::int64_t batch = 0;       // and the batch
  std::string metric, unit;
  std::vector<RankedCell> ranked;           // fastest first
  std::vector<RankedStrategy> strategies;   // fastest first
  // "hogwild/lock-free ran 1.12 ± 0.03 times as fast as locked/update-only (8 blocks)" or "not
  // distinguishable after 8 blocks: a, b, c"; the same sentence in every report.
  std::string verdict;
  // What the run says of the leader's start methods: advice only where they were told apart
  // (start_method_pooling.h), "not told apart (...); launch fork 10, spawn 590 ms" otherwise.
  std::string start_methods;
  // Ranked by blocks, on a budget that ended before this group had its minimum: "the budget cut its
  // blocks short: 3 of the 5 asked for at least" ("" otherwise). Every report says it beside the verdict.
  std::string budget_note;
  // Ranked by blocks: how many, the A/A control, and the tie margin the group was judged with (the
  // control's, or --tie-margin's when given); blocks == 0 when the group ran none.
  int blocks = 0;
  std::optional<BlockControl> control;
  double tie_margin = 0;
  std::vector<std::string> best() const;             // the cells marked = or ≈
  std::vector<std::string> best_strategies() const;  // the fastest strategy and every one tied with it
};


struct Recommendation {
  std::vector<RankingGroup> groups;  // by kind (training, inference, messages), then processes
  std::vector<Exclusion> excluded;
  double target = 0;                 // the relative half-width --repetitions auto aimed at; 0: fixed repetitions
  double tie_margin = kDefaultTieMargin;  // a strategy this close to the fastest (a share of its mean) is tied
  bool empty() const { return groups.empty(); }
};

Recommendation recommend(const RunResult& run);
// The same for cells still being run (--repetitions auto asks which cells are still contenders);
// `target` is the interval's relative half-width a cell must reach to count as settled (0: 5 %);
// `tie_margin`, how close to the fastest a strategy's mean must be to tie with it whatever the intervals.
// In a group ranked by blocks, the tie margin is the A/A control's unless `tie_margin_given`.
Recommendation recommend_cells(const std::vector<CellResult>& cells, double target, double tie_margin = kDefaultTieMargin,
                               bool tie_margin_given = false);

// The form results.json carries (docs/results-schema.md, "recommendation"); written for readers
// and recomputed from the cells whenever a file is loaded.
nlohmann::json recommendation_json(const Recommendation& rec);

// The mark every report puts before a ranked strategy or cell: "=" tied with the fastest (95 %
// intervals overlap), "≈" tied through the tie margin alone (intervals apart, means within it), ""
// not tied.
std::string tie_mark(const RankedStrategy& s);
std::string tie_mark(const RankedCell& c);

// "12 %" ahead, "±3.1 %" widths, and the like, as every report writes them.
std::string percent_text(double share);
// A strategy's speed as a multiple of the leader's, from its ratio to it (a share, - 1) and that
// ratio's 95 % interval: "× 0.97 ± 0.02" (the mean ± half the interval's width, as hyperfine
// writes a ratio); "× 0.97 (no interval)" from a single block.
std::string ratio_text(const MeanInterval& vs_leader);

}  // namespace sharebench
