// --repetitions auto: how many times each cell runs, decided while the run goes on. Every cell
// runs once first (its pilot). A cell that can be ranked (harness/results/recommendation.h) and
// timed less than `min_timed_s` of work has its steps raised so that each later repetition times
// at least that much; the pilot then keeps its checks but not its figures (Repetition::calibration).
// A tiny pilot can misjudge (its workers barely overlap), so a later repetition that timed well
// short of it (under two thirds) raises the steps again the same way, until the steps reach
// kMaxSteps. The runner then gives every cell of a ranking group the most steps any of them needs
// (a rate can depend on the steps), and a repetition run at fewer steps counts for its checks only.
// After the pilots, the scheduler hands out one repetition at a time to the ranked cell that needs
// it most, until every ranked cell's 95 % interval is within `target` of its mean, or the next
// repetition would not fit in the budget: first every cell to two measured repetitions, then the
// contenders (cells whose interval overlaps their group's fastest), then the rest; within a tier
// the fewest repetitions, then the widest interval.
// A strategy whose start methods were pooled is one measurement (harness/results/recommendation.h):
// once its pooled interval is within `target`, and each of its cells has its minimum, its cells are
// settled together.
// Handing out one repetition at a time interleaves the cells, so a slow drift of the machine
// (a neighbour, the clock) spreads over every cell instead of landing on one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "harness/results/results.h"

namespace sharebench {

struct AutoRepetitions {
  bool enabled = false;
  double target = 0.05;       // relative half-width of the 95 % interval (±5 %)
  double budget_s = 600;      // the whole run, pilots included
  double min_timed_s = 0.3;   // the least timed work of a ranked cell's repetition (the "~" rule is 0.2)
  int min_repetitions = 3;    // measured repetitions before an interval is believed
  // The ranking's tie margin (--tie-margin), which the race's contenders follow; a run of fixed
  // repetitions takes it from here too.
  double tie_margin = kDefaultTieMargin;
};

// Is the cell done: not ranked, or its interval is within the target after enough repetitions?
bool repetitions_settled(const CellResult& cell, const AutoRepetitions& policy);

// The steps a cell's later repetitions should run so that one times at least min_timed_s, judged
// from its last repetition; nullopt when that timed enough already, the cell is not ranked, or its
// steps cannot be raised further.
std::optional<std::int64_t> calibrated_steps(const CellResult& cell, const AutoRepetitions& policy);

// The cell that should run next, or nullopt when every ranked cell settled or no repetition of an
// unsettled one fits in the budget left. `elapsed_s` is the run's time so far.
std::optional<std::size_t> next_repetition(const std::vector<CellResult>& cells, const AutoRepetitions& policy,
                                           double elapsed_s);

// The ranked cells that did not settle, alone or with their strategy's other start methods, by id.
std::vector<std::string> unsettled_cells(const std::vector<CellResult>& cells, const AutoRepetitions& policy);

}  // namespace sharebench
