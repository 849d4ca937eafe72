// Ranking blocks, run after the first pass (every cell once, every check): for each group of
// strategies that can be ranked against each other (same kind of work, process count, model and
// batch, two strategies or more), block after block in which every contender runs once in a fresh
// random order and the first pass's fastest runs a second time (the A/A control). A contender is
// the cell of its strategy under its first start method (fork, then forkserver, then spawn: the
// loop is the same under each). With `adaptive`, a group gets at least `min_blocks`, then more until
// its leader is told apart (nothing tied with it, by interval or margin) or `max_blocks`, while the
// next block fits in the budget; otherwise exactly `min_blocks`. How a block's figures become a ranking:
// harness/results/block_ranking.h.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "harness/results/results.h"

namespace sharebench {

struct BlockPolicy {
  bool enabled = false;
  bool adaptive = true;    // --blocks auto
  int min_blocks = 5;      // auto: the fewest; --blocks N: exactly N
  int max_blocks = 20;     // auto: the most
  double budget_s = 240;   // auto: the whole run's time, the first pass included
  double tie_margin = 0;   // judged with when given (--tie-margin), else the A/A control's
  bool tie_margin_given = false;
};

// One block's run of one cell: runs a repetition of cells[cell] in block `block` (its A/A second
// run when `control`), appends it to the cell and saves the results.
using RunInBlock = std::function<void(std::size_t cell, int block, bool control)>;
// Said while the blocks go on: which block of which group, the budget left.
using BlockNews = std::function<void(const std::string& what)>;

struct BlocksRan {
  int rounds = 0;              // the most blocks any group got
  std::size_t repetitions = 0;
  bool budget_ran_out = false; // a group stopped for the budget before its leader was told apart
  std::size_t groups = 0;
  // Each group's contender cells (indices into `cells`) and the blocks it completed: on an
  // interrupt, the repetitions of a block that did not complete are the runner's to drop.
  std::vector<std::pair<std::vector<std::size_t>, int>> completed;
};

// The contender cells of each group that blocks would rank, by index into `cells`: the control's
// cell first (it runs twice). Empty when no group has two strategies to rank.
std::vector<std::vector<std::size_t>> block_groups(const std::vector<CellResult>& cells, double tie_margin);

// Runs the blocks; `elapsed_s` is the run's time so far, for the budget.
BlocksRan run_ranking_blocks(const std::vector<CellResult>& cells, const BlockPolicy& policy, const RunInBlock& run_one,
                             const std::function<double()>& elapsed_s, const BlockNews& news);

}  // namespace sharebench
