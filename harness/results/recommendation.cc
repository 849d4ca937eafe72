// The recommendation: ranking the strategies and cells that qualify, pooling a strategy's start methods
// unless they were told apart, stating ties as ties, naming what was left out.
#include "harness/results/recommendation.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "harness/results/start_method_pooling.h"

namespace sharebench {

namespace {

// Every repetition's verdict must be pass: an unknown check is not a passed one.
std::optional<std::string> undecided_check(const CellResult& cell) {
  for (const Repetition* r : measured_repetitions(cell)) {
    for (const Check& c : r->checks) {
      if (c.verdict != Verdict::kPass && c.verdict != Verdict::kNotExercised) {
        return fmt::format("{} was {} in repetition {}", c.name, to_string(c.verdict), r->index);
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string> not_converged(const CellResult& cell) {
  if (cell.kind != ScenarioKind::kTraining) return std::nullopt;
  for (const Repetition* r : measured_repetitions(cell)) {
    const auto it = std::find_if(r->checks.begin(), r->checks.end(),
                                 [](const Check& c) { return c.name == std::string(checks::kConvergence); });
    if (it == r->checks.end()) return std::string("no convergence verdict (the check did not run)");
  }
  return std::nullopt;  // a failed convergence check is caught as a failed check above
}

std::string model_of(const CellResult& c) {
  const std::string& m = c.config.workload.model;
  const std::size_t slash = m.rfind('/');
  return slash == std::string::npos ? m : m.substr(slash + 1);
}

double mean_of(const CellResult& cell, const char* metric) {
  double sum = 0;
  int n = 0;
  for (const Repetition* r : measured_repetitions(cell)) {
    const auto it = r->metrics.find(metric);
    if (it == r->metrics.end()) continue;
    sum += it->second;
    ++n;
  }
  return n == 0 ? 0 : sum / n;
}

std::vector<double> throughput_values(const CellResult& cell) {
  const std::string metric = ranking_metric(cell.kind);
  std::vector<double> values;
  for (const Repetition* r : measured_repetitions(cell)) {
    const auto it = r->metrics.find(metric);
    if (it != r->metrics.end() && std::isfinite(it->second)) values.push_back(it->second);
  }
  return values;
}

// "not told apart at this budget" when the intervals overlap (more repetitions could part
// them); "not told apart from run to run" when a strategy is tied through the margin alone.
std::string verdict_of(const RankingGroup& g, double tie_margin) {
  const RankedStrategy& best = g.strategies.front();
  if (g.strategies.size() == 1) return fmt::format("{} (the only strategy that qualified)", best.strategy);
  if (!best.rate.bounded()) {
    return fmt::format("{} was the fastest of {} strategies once, but with one repetition nothing is told from noise "
                       "(all tied)", best.strategy, g.strategies.size());
  }
  const std::vector<std::string> tied = g.best_strategies();
  const bool by_margin = std::any_of(g.strategies.begin(), g.strategies.end(), [](const RankedStrategy& s) { return s.tied_by_margin; });
  const std::string why = by_margin ? fmt::format("not told apart from run to run (means within the {} tie margin)",
                                                  percent_text(tie_margin))
                                    : std::string("not told apart at this budget");
  if (tied.size() > 3) return fmt::format("{}: the {} strategies marked = or ≈, led by {}", why, tied.size(), best.strategy);
  if (tied.size() > 1) {
    std::string names;
    for (const std::string& t : tied) names += (names.empty() ? "" : ", ") + t;
    return fmt::format("{}: {}", why, names);
  }
  const RankedStrategy& second = g.strategies[1];
  return fmt::format("{} ran {:.2f} times as fast as {}", best.strategy, best.rate.mean / second.rate.mean, second.strategy);
}


// The group's ties and verdict: by blocks where its cells ran in blocks (the margin the A/A
// control's unless --tie-margin was given), else by intervals and the tie margin.
void judge_group(RankingGroup& g, const std::vector<const CellResult*>& members, double tie_margin, bool tie_margin_given) {
  g.tie_margin = tie_margin;
  if (const std::optional<BlockRanking> blocks = rank_by_blocks(members)) {
    apply_blocks(g, *blocks, tie_margin_given ? tie_margin : (blocks->control ? blocks->control->margin() : 0));
  }
  g.verdict = g.blocks > 0 ? block_verdict(g) : verdict_of(g, tie_margin);
  g.start_methods = start_methods_text(g.strategies.front(), g.ranked, g.blocks > 0);
}

}  // namespace

std::string ranking_metric(ScenarioKind kind) {
  switch (kind) {
    case ScenarioKind::kTraining:
    case ScenarioKind::kInference: return "steps_per_s";
    case ScenarioKind::kMessages: return "messages_per_s";
    case ScenarioKind::kLockOnly:
    case ScenarioKind::kProgram: return "";
  }
  return "";
}

std::string ranking_unit(ScenarioKind kind) {
  switch (kind) {
    case ScenarioKind::kTraining: return "steps/s";
    case ScenarioKind::kInference: return "batches/s";
    case ScenarioKind::kMessages: return "messages/s";
    default: return "";
  }
}

std::vector<const Repetition*> measured_repetitions(const CellResult& cell) {
  std::vector<const Repetition*> out, pilots;
  for (const Repetition& r : cell.repetitions) (r.calibration ? pilots : out).push_back(&r);
  return out.empty() ? pilots : out;
}

MeanInterval throughput_interval(const CellResult& cell) { return mean_interval_95(throughput_values(cell)); }

std::optional<Exclusion> ranking_exclusion(const CellResult& cell) {
  const auto out = [&](const char* category, std::string why) {
    return std::optional<Exclusion>(Exclusion{cell.config.id(), category, std::move(why)});
  };
  if (cell.kind == ScenarioKind::kLockOnly) return out("not throughput", "a lock or fork-safety scenario: its steps are lock operations, not work");
  if (cell.kind == ScenarioKind::kProgram) return out("not throughput", "a program under exec: its steps are its own");
  if (cell.known_bug) return out("planted bug", "a planted bug");
  if (cell.config.fault.active()) return out("fault", "an injected fault");
  if (cell.config.chaos_seed != 0) return out("chaos", "run under --chaos, slowed on purpose");
  const CellOutcome o = cell.outcome();
  if (o.kind == Outcome::kSkipped || o.kind == Outcome::kInterrupted) {
    return out(o.kind == Outcome::kSkipped ? "skipped" : "interrupted", fmt::format("{}: {}", to_string(o.kind), o.reason));
  }
  if (o.kind != Outcome::kOk) return out("failed", fmt::format("failed: {}", o.summary));
  if (auto why = undecided_check(cell)) return out("check undecided", *why);
  if (auto why = not_converged(cell)) return out("no convergence verdict", *why);
  if (throughput_interval(cell).n == 0) return out("no figure", "no throughput figure");
  return std::nullopt;
}

std::vector<std::string> RankingGroup::best() const {
  std::vector<std::string> out;
  for (const RankedCell& r : ranked) {
    if (r.tied_with_best) out.push_back(r.cell);
  }
  return out;
}

std::vector<std::string> RankingGroup::best_strategies() const {
  std::vector<std::string> out;
  for (const RankedStrategy& s : strategies) {
    if (s.tied_with_best) out.push_back(s.strategy);
  }
  return out;
}

Recommendation recommend(const RunResult& run) {
  Recommendation rec = recommend_cells(run.cells, run.repetitions.automatic ? run.repetitions.target : 0,
                                       run.repetitions.tie_margin, run.repetitions.tie_margin_given);
  // A group the budget stopped short of the minimum says so in its own line (an interrupted run
  // says it in the policy line).
  const RepetitionPolicy& p = run.repetitions;
  if (p.blocks && p.blocks_adaptive && run.status == "complete") {
    for (RankingGroup& g : rec.groups) {
      if (g.blocks > 0 && g.blocks < p.blocks_min) {
        g.budget_note = fmt::format("the budget cut its blocks short: {} of the {} asked for at least", g.blocks, p.blocks_min);
      }
    }
  }
  return rec;
}

Recommendation recommend_cells(const std::vector<CellResult>& cells, double target, double tie_margin, bool tie_margin_given) {
  Recommendation rec;
  rec.target = target;
  rec.tie_margin = tie_margin;
  const double settle = target > 0 ? target : 0.05;
  // kind, processes, model and batch: only cells doing the same work are ranked against each other
  std::map<std::tuple<int, int, std::string, std::int64_t>, RankingGroup> groups;
  std::map<std::string, std::vector<double>> values;  // by cell id
  std::map<std::tuple<int, int, std::string, std::int64_t>, std::vector<const CellResult*>> members_of;
  for (const CellResult& c : cells) {
    if (auto why = ranking_exclusion(c)) {
      rec.excluded.push_back(*why);
      continue;
    }
    const auto key = std::make_tuple(static_cast<int>(c.kind), c.config.procs, model_of(c), c.config.workload.batch);
    members_of[key].push_back(&c);
    RankingGroup& g = groups[key];
    g.kind = c.kind;
    g.procs = c.config.procs;
    g.model = model_of(c);
    g.batch = c.config.workload.batch;
    g.metric = ranking_metric(c.kind);
    g.unit = ranking_unit(c.kind);
    RankedCell r;
    r.cell = c.config.id();
    r.strategy = c.config.scenario + "/" + c.config.variant;
    r.start = c.config.start;
    r.rate = throughput_interval(c);
    r.settled = r.rate.relative_half_width() <= settle;
    r.uss_mb = mean_of(c, "worker_uss_mb_peak");
    r.launch_ms = mean_of(c, "launch_s_max") * 1000;
    values[r.cell] = throughput_values(c);
    g.ranked.push_back(r);
  }
  for (auto& [key, g] : groups) {
    std::stable_sort(g.ranked.begin(), g.ranked.end(),
                     [](const RankedCell& a, const RankedCell& b) { return a.rate.mean > b.rate.mean; });
    // Each strategy from its cells, in the order the cells ranked.
    std::map<std::string, std::vector<std::size_t>> members;
    std::vector<std::string> order;
    for (std::size_t i = 0; i < g.ranked.size(); ++i) {
      auto [it, fresh] = members.try_emplace(g.ranked[i].strategy);
      if (fresh) order.push_back(g.ranked[i].strategy);
      it->second.push_back(i);
    }
    std::map<std::string, std::vector<bool>> counting;  // which of a strategy's cells its rate stands for
    for (const std::string& name : order) {
      std::vector<const RankedCell*> mine;
      std::vector<std::vector<double>> figures;
      for (std::size_t i : members[name]) {
        mine.push_back(&g.ranked[i]);
        figures.push_back(values[g.ranked[i].cell]);
      }
      g.strategies.push_back(rank_strategy(mine, figures, settle, counting[name]));
    }
    std::stable_sort(g.strategies.begin(), g.strategies.end(),
                     [](const RankedStrategy& a, const RankedStrategy& b) { return a.rate.mean > b.rate.mean; });
    const MeanInterval& fastest = g.strategies.front().rate;
    for (RankedStrategy& s : g.strategies) {
      s.tied_with_best = s.rate.overlaps(fastest);
      s.tied_by_margin = !s.tied_with_best && s.rate.bounded() && s.rate.mean >= fastest.mean * (1 - tie_margin);
      s.tied_with_best = s.tied_with_best || s.tied_by_margin;
    }
    for (const RankedStrategy& s : g.strategies) {
      const std::vector<std::size_t>& mine = members[s.strategy];
      for (std::size_t k = 0; k < mine.size(); ++k) {
        RankedCell& r = g.ranked[mine[k]];
        r.tied_with_best = s.tied_with_best && counting[s.strategy][k];
        r.tied_by_margin = r.tied_with_best && s.tied_by_margin;
        r.settled = r.settled || (s.pooled && s.settled);  // settled with its strategy's other start methods
      }
    }
    judge_group(g, members_of[key], tie_margin, tie_margin_given);
    rec.groups.push_back(std::move(g));
  }
  return rec;
}

namespace {
std::string mark_of(bool tied, bool by_margin) { return !tied ? "" : by_margin ? "≈" : "="; }
}  // namespace
std::string tie_mark(const RankedStrategy& s) { return mark_of(s.tied_with_best, s.tied_by_margin); }
std::string tie_mark(const RankedCell& c) { return mark_of(c.tied_with_best, c.tied_by_margin); }

std::string percent_text(double share) {
  if (!std::isfinite(share)) return "unbounded";
  const double p = share * 100;
  return std::fabs(p) < 10 ? fmt::format("{:.1f} %", p) : fmt::format("{:.0f} %", p);
}

std::string ratio_text(const MeanInterval& vs_leader) {
  if (!vs_leader.bounded()) return fmt::format("× {:.2f} (no interval)", 1 + vs_leader.mean);
  return fmt::format("× {:.2f} ± {:.2f}", 1 + vs_leader.mean, (vs_leader.hi - vs_leader.lo) / 2);
}

}  // namespace sharebench
