// Ranking blocks: which cells contend in each group, the blocks in a fresh random order each, and
// when a group has had enough.
#include "harness/runner/ranking_blocks.h"

#include <algorithm>
#include <map>
#include <random>

#include <fmt/format.h>

#include "harness/results/recommendation.h"
#include "harness/results/start_method_pooling.h"
#include "harness/util/interrupt.h"
#include "harness/util/text.h"

namespace sharebench {

namespace {

struct BlockGroup {
  std::vector<std::size_t> cells;  // the control's first
  std::string name;                // "training, 2 processes"
  int blocks = 0;
  bool done = false;
};

std::size_t index_of(const std::vector<CellResult>& cells, const std::string& id) {
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (cells[i].config.id() == id) return i;
  }
  return cells.size();
}

// A block's cost, judged from each contender's last repetition (the control's twice).
double block_cost_s(const std::vector<CellResult>& cells, const BlockGroup& g) {
  double s = 0;
  for (std::size_t i : g.cells) s += cells[i].repetitions.empty() ? 0 : cells[i].repetitions.back().wall_s;
  return s + (cells[g.cells.front()].repetitions.empty() ? 0 : cells[g.cells.front()].repetitions.back().wall_s);
}

// The group, as ranked now, that holds the control's cell; nullptr when it no longer ranks.
const RankingGroup* ranked_now(const Recommendation& rec, const std::string& control) {
  for (const RankingGroup& g : rec.groups) {
    for (const RankedCell& r : g.ranked) {
      if (r.cell == control) return &g;
    }
  }
  return nullptr;
}

// Has the group answered: its fewest blocks run, and its leader told apart (or nothing left to rank)?
bool answered(const std::vector<CellResult>& cells, const BlockGroup& g, const BlockPolicy& policy) {
  if (g.blocks < policy.min_blocks) return false;
  const Recommendation rec = recommend_cells(cells, 0, policy.tie_margin, policy.tie_margin_given);
  const RankingGroup* now = ranked_now(rec, cells[g.cells.front()].config.id());
  if (now == nullptr || now->strategies.size() < 2) return true;  // nothing left to rank against
  return now->best_strategies().size() == 1;  // nothing tied with the leader, by interval or margin
}

// After a block: is the group done? Exactly N blocks, or (auto) answered or at the most.
bool group_done(const std::vector<CellResult>& cells, const BlockGroup& g, const BlockPolicy& policy) {
  if (!policy.adaptive) return g.blocks >= policy.min_blocks;
  return g.blocks >= policy.max_blocks || answered(cells, g, policy);
}

}  // namespace

std::vector<std::vector<std::size_t>> block_groups(const std::vector<CellResult>& cells, double tie_margin) {
  std::vector<std::vector<std::size_t>> out;
  for (const RankingGroup& g : recommend_cells(cells, 0, tie_margin).groups) {
    if (g.strategies.size() < 2) continue;
    // Each strategy under its first start method (fork where it ran): the loop is the same under
    // each, and spawn's launch would cost each block a third of a second per contender.
    std::vector<std::size_t> mine;
    for (const RankedStrategy& s : g.strategies) {  // the fastest first: the control
      const RankedCell* pick = nullptr;
      for (const RankedCell& r : g.ranked) {
        if (r.strategy == s.strategy && (!pick || start_preference(r.start) < start_preference(pick->start))) pick = &r;
      }
      mine.push_back(index_of(cells, pick->cell));
    }
    out.push_back(std::move(mine));
  }
  return out;
}

BlocksRan run_ranking_blocks(const std::vector<CellResult>& cells, const BlockPolicy& policy, const RunInBlock& run_one,
                             const std::function<double()>& elapsed_s, const BlockNews& news) {
  BlocksRan ran;
  std::vector<BlockGroup> groups;
  for (std::vector<std::size_t>& members : block_groups(cells, policy.tie_margin)) {
    const CellResult& first = cells[members.front()];
    BlockGroup g;
    g.name = fmt::format("{}, {}", to_string(first.kind), counted(first.config.procs, "process", "processes"));
    g.cells = std::move(members);
    groups.push_back(std::move(g));
  }
  ran.groups = groups.size();
  std::mt19937_64 rng{std::random_device{}()};
  // Set once the budget stopped a group short of its minimum: from then on no group gets a block
  // past the minimum while that one is short of it (the others still fill their minimum).
  bool one_starved = false;
  while (!interrupt_requested()) {
    std::vector<BlockGroup*> active;
    for (BlockGroup& g : groups) {
      if (!g.done) active.push_back(&g);
    }
    if (active.empty()) break;
    std::shuffle(active.begin(), active.end(), rng);
    for (BlockGroup* g : active) {
      if (interrupt_requested()) break;
      if (one_starved && g->blocks >= policy.min_blocks) {
        g->done = true;
        ran.budget_ran_out = ran.budget_ran_out || !answered(cells, *g, policy);
        continue;
      }
      if (policy.adaptive && elapsed_s() + block_cost_s(cells, *g) > policy.budget_s) {
        g->done = true;
        ran.budget_ran_out = ran.budget_ran_out || !answered(cells, *g, policy);
        one_starved = one_starved || g->blocks < policy.min_blocks;
        continue;
      }
      // Every contender once, the control twice, in a fresh random order.
      std::vector<std::pair<std::size_t, bool>> order;
      for (std::size_t i : g->cells) order.emplace_back(i, false);
      order.emplace_back(g->cells.front(), true);
      std::shuffle(order.begin(), order.end(), rng);
      news(fmt::format("block {} of {} ({} runs)", g->blocks + 1, g->name, order.size()));
      for (const auto& [cell, control] : order) {
        if (interrupt_requested()) break;
        run_one(cell, g->blocks, control);
        ++ran.repetitions;
      }
      if (interrupt_requested()) break;
      ++g->blocks;
      ran.rounds = std::max(ran.rounds, g->blocks);
      g->done = group_done(cells, *g, policy);
    }
  }
  for (const BlockGroup& g : groups) ran.completed.emplace_back(g.cells, g.blocks);
  return ran;
}

}  // namespace sharebench
