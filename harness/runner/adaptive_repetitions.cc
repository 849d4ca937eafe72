// --repetitions auto: when a cell has settled, how long its repetitions should be, which runs next.
#include "harness/runner/adaptive_repetitions.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "harness/plan/matrix.h"
#include "harness/results/recommendation.h"

namespace sharebench {

namespace {

// A repetition's cost as the cell's measured repetitions took it (setup and teardown included).
double expected_cost_s(const CellResult& cell) {
  double sum = 0;
  int n = 0;
  for (const Repetition* r : measured_repetitions(cell)) {
    sum += r->wall_s;
    ++n;
  }
  return n == 0 ? 0 : sum / n;
}

int measured_count(const CellResult& cell) {
  int n = 0;
  for (const Repetition& r : cell.repetitions) n += !r.calibration;
  return n;
}

// The cells of strategies whose start methods were pooled and whose pooled interval settled: their
// start methods together answered, so none of them needs more (each has its minimum already).
std::set<std::string> settled_together(const std::vector<CellResult>& cells, const std::vector<RankingGroup>& groups,
                                       const AutoRepetitions& policy) {
  std::map<std::string, const CellResult*> by_id;
  for (const CellResult& c : cells) by_id[c.config.id()] = &c;
  std::set<std::string> out;
  for (const RankingGroup& g : groups) {
    for (const RankedStrategy& s : g.strategies) {
      if (!s.pooled || !s.settled) continue;
      std::vector<std::string> mine;
      bool enough = true;
      for (const RankedCell& r : g.ranked) {
        if (r.strategy != s.strategy) continue;
        mine.push_back(r.cell);
        enough = enough && measured_count(*by_id.at(r.cell)) >= policy.min_repetitions;
      }
      if (enough) out.insert(mine.begin(), mine.end());
    }
  }
  return out;
}

}  // namespace

bool repetitions_settled(const CellResult& cell, const AutoRepetitions& policy) {
  if (ranking_exclusion(cell)) return true;  // nothing to rank: one repetition said what it had to
  if (measured_count(cell) < policy.min_repetitions) return false;
  return throughput_interval(cell).relative_half_width() <= policy.target;
}

std::optional<std::int64_t> calibrated_steps(const CellResult& cell, const AutoRepetitions& policy) {
  if (cell.repetitions.empty() || ranking_exclusion(cell)) return std::nullopt;
  const std::map<std::string, double>& m = cell.repetitions.back().metrics;
  const auto run_s = m.find("run_s"), total = m.find("steps_total"), rate = m.find("steps_per_s");
  if (run_s == m.end() || !(run_s->second > 0)) return std::nullopt;
  // The pilot is held to the whole minimum; a later repetition only when it fell well short (two
  // thirds: the reports' "~" rule at the default), so that noise around the minimum wastes nothing.
  const double threshold = cell.repetitions.size() == 1 ? policy.min_timed_s : policy.min_timed_s * 2 / 3;
  if (run_s->second >= threshold) return std::nullopt;
  // What the pilot's steps take at its steady rate: a short pilot's timed region is mostly its
  // start (the barrier's release, first touches), which longer repetitions do not repeat.
  double timed = run_s->second;
  if (total != m.end() && rate != m.end() && rate->second > 0) timed = std::min(timed, total->second / rate->second);
  // A fifth more than that says, for what does not scale.
  const double factor = std::min(50.0, std::ceil(policy.min_timed_s / timed * 1.2));
  const std::int64_t steps = cell.config.workload.steps;
  const std::int64_t raised = std::min<std::int64_t>(kMaxSteps, static_cast<std::int64_t>(static_cast<double>(steps) * factor));
  if (raised <= steps) return std::nullopt;  // at the limit already: measure what it gives
  return raised;
}

std::optional<std::size_t> next_repetition(const std::vector<CellResult>& cells, const AutoRepetitions& policy,
                                           double elapsed_s) {
  // A race (as F-race and successive elimination run one): a cell whose interval already lies wholly
  // below its group's fastest cannot change the answer, so the contenders, the cells tied with the
  // fastest, get the repetitions first; the rest only once every contender has settled.
  const Recommendation rec = recommend_cells(cells, policy.target, policy.tie_margin);
  std::set<std::string> contenders;
  for (const RankingGroup& g : rec.groups) {
    for (const std::string& id : g.best()) contenders.insert(id);
  }
  const std::set<std::string> together = settled_together(cells, rec.groups, policy);
  std::optional<std::size_t> best;
  std::tuple<int, int, double> best_key;  // (tier, measured repetitions, -width): smallest first
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const CellResult& c = cells[i];
    if (repetitions_settled(c, policy) || together.count(c.config.id()) ||
        c.repetitions.size() >= static_cast<std::size_t>(kMaxRepetitions)) {
      continue;
    }
    if (elapsed_s + expected_cost_s(c) > policy.budget_s) continue;  // would not fit: a cheaper one may
    const int count = measured_count(c);
    const int tier = count < 2 ? 0 : contenders.count(c.config.id()) ? 1 : 2;
    const std::tuple<int, int, double> key{tier, count, -throughput_interval(c).relative_half_width()};
    if (!best || key < best_key) {
      best = i;
      best_key = key;
    }
  }
  return best;
}

std::vector<std::string> unsettled_cells(const std::vector<CellResult>& cells, const AutoRepetitions& policy) {
  const std::set<std::string> together = settled_together(cells, recommend_cells(cells, policy.target, policy.tie_margin).groups, policy);
  std::vector<std::string> out;
  for (const CellResult& c : cells) {
    if (!repetitions_settled(c, policy) && !together.count(c.config.id())) out.push_back(c.config.id());
  }
  return out;
}

}  // namespace sharebench
