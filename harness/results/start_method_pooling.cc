// A strategy's start methods in the ranking: pooled into one measurement unless two were told apart,
// and the one start method to advise (the quickest launch among those that count, fork first when
// launches are alike). Kept apart from recommendation.cc, which ranks the strategies these make.
#include "harness/results/start_method_pooling.h"

#include <algorithm>

#include <fmt/format.h>

namespace sharebench {

int start_preference(StartMethod m) {
  switch (m) {
    case StartMethod::kFork: return 0;
    case StartMethod::kForkserver: return 1;
    case StartMethod::kSpawn: return 2;
    case StartMethod::kThread: return 3;
  }
  return 4;
}

namespace {

// Two start methods are told apart when each was measured kMinToTellApart times or more and their
// intervals still part. With fewer, a spell of the machine (lasting seconds, it can cover all of one
// cell's repetitions) parts them as often as a real difference, and ranking by the fastest then picks
// the luckiest (the winner's curse: docs/reports.md, 3 388 steps/s from 3 repetitions against 3 068).
constexpr int kMinToTellApart = 6;
bool told_apart(const RankedCell& a, const RankedCell& b) {
  return a.rate.n >= kMinToTellApart && b.rate.n >= kMinToTellApart && !a.rate.overlaps(b.rate);
}

// A strategy's start methods are pooled when each was measured kMinToPool times or more and no two
// of them were told apart. A start method measured once or twice cannot be shown to run like the
// others (two repetitions give an interval 12.7 standard errors wide, which overlaps nearly
// anything), so until then the strategy is ranked by its fastest start method, whose wide interval
// keeps it a contender that gets more.
constexpr int kMinToPool = 3;

}  // namespace

// One strategy from its cells (fastest first) and their figures: see the header.
RankedStrategy rank_strategy(const std::vector<const RankedCell*>& cells, const std::vector<std::vector<double>>& values,
                             double settle, std::vector<bool>& counts) {
  RankedStrategy s;
  s.strategy = cells.front()->strategy;
  for (const RankedCell* c : cells) s.starts.emplace_back(to_string(c->start));
  s.pooled = cells.size() > 1;
  for (std::size_t i = 0; i < cells.size() && s.pooled; ++i) {
    s.pooled = cells[i]->rate.n >= kMinToPool;
    for (std::size_t j = i + 1; j < cells.size() && s.pooled; ++j) s.pooled = !told_apart(*cells[i], *cells[j]);
  }
  counts.assign(cells.size(), false);
  if (s.pooled) {
    std::vector<double> all;
    for (const auto& v : values) all.insert(all.end(), v.begin(), v.end());
    s.rate = mean_interval_95(all);
    counts.assign(cells.size(), true);
  } else {
    s.rate = cells.front()->rate;
    for (std::size_t i = 0; i < cells.size(); ++i) counts[i] = i == 0 || (cells[i]->rate.bounded() && cells[0]->rate.bounded() &&
                                                                           cells[i]->rate.overlaps(cells[0]->rate));
  }
  // The start method to use: the quickest launch among those that count. Launches within 25 % or
  // 5 ms of the quickest are alike (fork and forkserver differ by noise), and among those fork comes
  // first, then forkserver, then spawn, so the advice does not flip with a millisecond. A launch not
  // measured (0) never wins over one that was.
  const RankedCell* quickest = nullptr;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (counts[i] && cells[i]->launch_ms > 0 && (!quickest || cells[i]->launch_ms < quickest->launch_ms)) quickest = cells[i];
  }
  const RankedCell* use = cells.front();
  if (quickest) {
    const double alike = std::max(quickest->launch_ms + 5, quickest->launch_ms * 1.25);
    use = quickest;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const RankedCell* c = cells[i];
      if (counts[i] && c->launch_ms > 0 && c->launch_ms <= alike && start_preference(c->start) < start_preference(use->start)) use = c;
    }
  }
  s.start = use->start;
  s.cell = use->cell;
  s.uss_mb = use->uss_mb;
  s.launch_ms = use->launch_ms;
  s.settled = s.rate.relative_half_width() <= settle;
  return s;
}

// The launch of each of the strategy's start methods, as measured: "fork 10, forkserver 9, spawn 590 ms".
static std::string launches_text(const std::vector<const RankedCell*>& mine) {
  std::string launches;
  for (const RankedCell* c : mine) {
    if (c->launch_ms > 0) launches += fmt::format("{}{} {:.0f}", launches.empty() ? "" : ", ", to_string(c->start), c->launch_ms);
  }
  return launches.empty() ? launches : launches + " ms";
}

// The strategy's cells, in start-method preference order.
static std::vector<const RankedCell*> cells_of(const RankedStrategy& s, const std::vector<RankedCell>& ranked) {
  std::vector<const RankedCell*> mine;
  for (const RankedCell& c : ranked) {
    if (c.strategy == s.strategy) mine.push_back(&c);
  }
  std::sort(mine.begin(), mine.end(), [](const RankedCell* a, const RankedCell* b) {
    return start_preference(a->start) < start_preference(b->start);
  });
  return mine;
}

std::string start_methods_text(const RankedStrategy& s, const std::vector<RankedCell>& ranked, bool by_blocks) {
  const std::vector<const RankedCell*> mine = cells_of(s, ranked);
  const std::string launches = launches_text(mine);
  const std::string launch = launches.empty() ? "" : "; launch " + launches;
  if (mine.size() <= 1) {
    return fmt::format("only {} measured{}", to_string(s.start), s.launch_ms > 0 ? fmt::format(" (launch {:.0f} ms)", s.launch_ms) : "");
  }
  if (by_blocks) return fmt::format("not told apart (blocks ran under {}){}", to_string(s.start), launch);
  if (!s.pooled && !s.rate.bounded()) return "not told apart (one run each)" + launch;
  if (s.pooled) {
    bool apart = false;  // pooled, but not yet shown alike: say so
    for (std::size_t i = 0; i < mine.size(); ++i) {
      for (std::size_t j = i + 1; j < mine.size(); ++j) apart = apart || !mine[i]->rate.overlaps(mine[j]->rate);
    }
    return fmt::format("not told apart ({}){}",
                       apart ? fmt::format("their intervals part, but from fewer than {} repetitions", kMinToTellApart)
                             : std::string("they ran alike"),
                       launch);
  }
  std::string slower;
  for (const RankedCell* c : mine) {
    if (!(c->rate.bounded() && c->rate.overlaps(s.rate))) slower += (slower.empty() ? "" : ", ") + std::string(to_string(c->start));
  }
  return fmt::format("start it with {}: told apart, {} ran slower{}", to_string(s.start), slower.empty() ? "one" : slower, launch);
}

}  // namespace sharebench
