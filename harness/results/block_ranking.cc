// Ranking by blocks: each strategy's figures block by block, the leader by its block-normalised
// score, every other strategy as its ratio to the leader in the same blocks, the A/A control.
#include "harness/results/block_ranking.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "harness/results/recommendation.h"
#include "harness/results/start_method_pooling.h"
#include "harness/util/text.h"

namespace sharebench {

double BlockControl::margin() const { return difference.n >= 2 ? typical : 0; }

bool BlockControl::false_difference() const { return difference.bounded() && (difference.lo > 0 || difference.hi < 0); }

bool in_block(const Repetition& r) { return r.block >= 0; }

namespace {

// The mean ratio with its interval, from the log ratios block by block: a ratio's arithmetic mean is
// biased upward by its own spread (the mean of x/y over exchangeable x and y is about 1 + CV², +4 %
// at this VM's spread), so two runs of one strategy would seem to differ; the mean of ln(x/y) is 0.
// Returned as shares: exp(mean) - 1, exp(lo) - 1, exp(hi) - 1.
MeanInterval ratio_interval(const std::vector<double>& log_ratios) {
  MeanInterval m = mean_interval_95(log_ratios);
  const bool bounded = m.bounded();
  m.mean = std::expm1(m.mean);
  if (bounded) {
    m.lo = std::expm1(m.lo);
    m.hi = std::expm1(m.hi);
  }
  return m;
}

double figure(const Repetition& r, const std::string& metric) {
  const auto it = r.metrics.find(metric);
  return it == r.metrics.end() || !std::isfinite(it->second) || it->second <= 0 ? 0 : it->second;
}

// The control's two runs of each block: (its plain run / its control run) - 1, from log ratios.
std::optional<BlockControl> control_of(const CellResult& cell) {
  const std::string metric = ranking_metric(cell.kind);
  std::map<int, double> first, second;
  for (const Repetition& r : cell.repetitions) {
    const double v = figure(r, metric);
    if (!in_block(r) || v <= 0) continue;
    (r.control ? second : first)[r.block] = v;
  }
  if (second.empty()) return std::nullopt;
  std::vector<double> diffs, distances;
  for (const auto& [block, v] : second) {
    if (!first.count(block)) continue;
    diffs.push_back(std::log(first[block] / v));
    distances.push_back(std::fabs(diffs.back()));
  }
  BlockControl c;
  c.typical = distances.empty() ? 0 : std::expm1(median(distances));
  c.strategy = cell.config.scenario + "/" + cell.config.variant;
  c.cell = cell.config.id();
  c.difference = ratio_interval(diffs);
  return c;
}

}  // namespace

std::optional<BlockRanking> rank_by_blocks(const std::vector<const CellResult*>& cells) {
  BlockRanking out;
  for (const CellResult* c : cells) {
    const std::string metric = ranking_metric(c->kind);
    BlockStanding s;
    s.strategy = c->config.scenario + "/" + c->config.variant;
    s.cell = c->config.id();
    for (const Repetition& r : c->repetitions) {
      if (in_block(r) && !r.control && figure(r, metric) > 0) s.rate_by_block[r.block] = figure(r, metric);
    }
    if (s.rate_by_block.empty()) continue;
    const bool known = std::any_of(out.standings.begin(), out.standings.end(),
                                   [&](const BlockStanding& o) { return o.strategy == s.strategy; });
    if (known) continue;  // one cell per strategy runs in blocks; a second is the first pass's
    if (!out.control) out.control = control_of(*c);
    out.standings.push_back(std::move(s));
  }
  if (out.standings.empty()) return std::nullopt;
  // Each block's mean log rate over the strategies that ran in it: the block's own level.
  std::map<int, std::pair<double, int>> level;
  for (const BlockStanding& s : out.standings) {
    for (const auto& [block, v] : s.rate_by_block) {
      level[block].first += std::log(v);
      ++level[block].second;
    }
  }
  for (const auto& [block, sum] : level) out.blocks += sum.second >= 2;
  for (BlockStanding& s : out.standings) {
    std::vector<double> rates;
    double score = 0;
    for (const auto& [block, v] : s.rate_by_block) {
      rates.push_back(v);
      score += std::log(v) - level[block].first / level[block].second;
    }
    s.rate = mean_interval_95(rates);
    s.score = score / static_cast<double>(s.rate_by_block.size());
  }
  std::stable_sort(out.standings.begin(), out.standings.end(),
                   [](const BlockStanding& a, const BlockStanding& b) { return a.score > b.score; });
  const BlockStanding& leader = out.standings.front();
  for (BlockStanding& s : out.standings) {
    std::vector<double> ratios;
    for (const auto& [block, v] : s.rate_by_block) {
      const auto it = leader.rate_by_block.find(block);
      if (it != leader.rate_by_block.end()) ratios.push_back(std::log(v / it->second));
    }
    s.vs_leader = ratio_interval(ratios);
  }
  std::stable_sort(out.standings.begin() + 1, out.standings.end(), [](const BlockStanding& a, const BlockStanding& b) {
    return a.vs_leader.mean > b.vs_leader.mean;
  });
  return out;
}

// A group ranked by blocks: each strategy's rate and ratio to the leader from its blocks; tied
// when that ratio's interval reaches 0 (=), or when its mean is within the margin (≈).
void apply_blocks(RankingGroup& g, const BlockRanking& b, double margin) {
  g.blocks = b.blocks;
  g.control = b.control;
  g.tie_margin = margin;
  std::vector<RankedStrategy> ordered;
  for (const BlockStanding& st : b.standings) {
    const auto it = std::find_if(g.strategies.begin(), g.strategies.end(),
                                 [&](const RankedStrategy& s) { return s.strategy == st.strategy; });
    if (it == g.strategies.end()) continue;  // its block cell was not ranked (a check failed there)
    RankedStrategy s = *it;
    s.rate = st.rate;
    s.vs_leader = st.vs_leader;
    s.cell = st.cell;
    for (const RankedCell& r : g.ranked) {
      if (r.cell != st.cell) continue;
      s.start = r.start;
      s.uss_mb = r.uss_mb;
      s.launch_ms = r.launch_ms;
    }
    const bool leader = ordered.empty();
    s.tied_with_best = leader || (st.vs_leader.bounded() && st.vs_leader.hi >= 0);
    // Behind by more than the margin only when the whole interval is: a run that looks again after
    // every block until something parts would otherwise, sooner or later, part two equals.
    s.tied_by_margin = !s.tied_with_best && st.vs_leader.bounded() && st.vs_leader.hi >= -margin;
    s.tied_with_best = s.tied_with_best || s.tied_by_margin;
    ordered.push_back(s);
  }
  // Strategies without blocks (none ran, or their block cell failed a check) come last, untied.
  for (RankedStrategy s : g.strategies) {
    const bool placed = std::any_of(ordered.begin(), ordered.end(), [&](const RankedStrategy& o) { return o.strategy == s.strategy; });
    if (placed) continue;
    s.tied_with_best = s.tied_by_margin = false;
    ordered.push_back(s);
  }
  // The leader is settled once nothing is tied with it through overlapping intervals alone.
  const bool told_apart = std::none_of(ordered.begin() + 1, ordered.end(),
                                       [](const RankedStrategy& s) { return s.tied_with_best && !s.tied_by_margin; });
  for (std::size_t i = 0; i < ordered.size(); ++i) {
    ordered[i].settled = i == 0 ? told_apart : !ordered[i].tied_with_best || ordered[i].tied_by_margin;
  }
  g.strategies = std::move(ordered);
  for (RankedCell& r : g.ranked) {
    const auto it = std::find_if(g.strategies.begin(), g.strategies.end(),
                                 [&](const RankedStrategy& s) { return s.strategy == r.strategy; });
    r.tied_with_best = it != g.strategies.end() && it->tied_with_best && it->cell == r.cell;
    r.tied_by_margin = r.tied_with_best && it->tied_by_margin;
  }
}

// The verdict of a group ranked by blocks: the leader with its margin and interval, or the tie.
std::string block_verdict(const RankingGroup& g) {
  const RankedStrategy& best = g.strategies.front();
  const std::string blocks = counted(g.blocks, "block", "blocks");
  if (g.strategies.size() == 1) return fmt::format("{} (the only strategy that qualified)", best.strategy);
  if (g.blocks < 2) {
    return fmt::format("{} led in {}, but one block tells nothing from noise (all tied)", best.strategy, blocks);
  }
  const std::vector<std::string> tied = g.best_strategies();
  if (tied.size() == 1) {
    const RankedStrategy& second = g.strategies[1];
    const MeanInterval& v = second.vs_leader;
    // The leader's speed over the second's is 1 / (1 + its ratio); the interval maps the same way.
    // Said as hyperfine says it: the ratio ± half its 95 % interval's width.
    const double lo = 1 / (1 + v.hi), hi = 1 / (1 + v.lo);
    return fmt::format("{} ran {:.2f} ± {:.2f} times as fast as {} ({})", best.strategy, 1 / (1 + v.mean), (hi - lo) / 2,
                       second.strategy, blocks);
  }
  if (tied.size() > 3) {
    return fmt::format("not told apart after {}: the {} strategies marked = or ≈, led by {}", blocks, tied.size(),
                       best.strategy);
  }
  std::string names = best.strategy;
  for (std::size_t i = 1; i < g.strategies.size(); ++i) {
    const RankedStrategy& s = g.strategies[i];
    if (s.tied_with_best) names += fmt::format(", {} ({}{})", s.strategy, s.tied_by_margin ? "≈ " : "", ratio_text(s.vs_leader));
  }
  return fmt::format("not told apart after {}: {}", blocks, names);
}

}  // namespace sharebench
