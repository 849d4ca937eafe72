// A strategy's start methods in the ranking (recommendation.cc's helper): whether they pool into
// one measurement, which of their cells the strategy's rate stands for, and what the run says of
// them in words (advice only where they were told apart).
#pragma once

#include <string>
#include <vector>

#include "harness/results/recommendation.h"

namespace sharebench {

// Among start methods that launch alike: fork (the fewest moving parts), then forkserver, then
// spawn, then threads; the smaller, the earlier. Ranking blocks run a strategy under its first.
int start_preference(StartMethod m);

// One strategy from its cells (fastest first) and each cell's figures: pooled when every start
// method was measured 3 times or more and no two were told apart (intervals apart after 6
// repetitions each); otherwise ranked by its fastest start method. `settle` is the relative
// half-width that counts as settled; `counts[i]` comes back true for the cells the rate stands for.
RankedStrategy rank_strategy(const std::vector<const RankedCell*>& cells, const std::vector<std::vector<double>>& values,
                             double settle, std::vector<bool>& counts);

// What the run says of the strategy's start methods, advice only where they were told apart:
// "start it with spawn: told apart, fork ran slower; launch ..." (6+ repetitions each, intervals
// apart), else "not told apart (they ran alike); launch fork 10, forkserver 9, spawn 590 ms",
// or "only fork measured (launch 10 ms)". `ranked` is the group's cells; `by_blocks`: the group
// was ranked in blocks, which run every strategy under one start method and so never tell them apart.
std::string start_methods_text(const RankedStrategy& s, const std::vector<RankedCell>& ranked, bool by_blocks);

}  // namespace sharebench
