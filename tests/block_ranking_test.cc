// Ranking by blocks: a drift of the machine between blocks cancels where pooled figures would tie;
// a tie is stated with each strategy's ratio to the leader; the A/A control's margin ties what is
// closer than the same strategy lands from itself, and what is behind only when its whole
// interval is beyond it; one block tells nothing; the scheduler runs every
// contender once and the control twice per block, in orders that differ, stops a group once its
// leader is told apart and not before the fewest blocks, keeps going while tied up to the most, and
// stops at the budget; and the block numbers survive the results file.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "harness/results/block_ranking.h"
#include "harness/results/recommendation.h"
#include "harness/results/results_json.h"
#include "harness/runner/ranking_blocks.h"

namespace sharebench {
namespace {

Repetition measured(double rate, int block, bool control = false) {
  Repetition r;
  r.wall_s = 1.0;
  r.checks = {{"liveness", Verdict::kPass, 0.0, ""}, {"convergence", Verdict::kPass, 1.0, ""}};  // NOLINT(check-id)
  r.metrics = {{"steps_per_s", rate}, {"run_s", 0.5}, {"launch_s_max", 0.01}};
  r.verdict = overall_verdict(r.checks);
  r.block = block;
  r.control = control;
  return r;
}

// A training cell whose first pass ran at `first`, then one repetition per block at `rates[b]`.
CellResult strategy(const char* scenario, std::vector<double> rates, double first = 0) {
  CellResult c;
  c.config.scenario = scenario;
  c.config.variant = "v";
  c.config.start = StartMethod::kFork;
  c.config.procs = 2;
  c.kind = ScenarioKind::kTraining;
  c.repetitions.push_back(measured(first > 0 ? first : rates.empty() ? 100 : rates.front(), -1));
  for (std::size_t b = 0; b < rates.size(); ++b) c.repetitions.push_back(measured(rates[b], static_cast<int>(b)));
  for (std::size_t i = 0; i < c.repetitions.size(); ++i) {
    c.repetitions[i].index = static_cast<int>(i);
    judge_against(c.expected, c.repetitions[i]);
  }
  return c;
}

void add_control(CellResult& c, std::vector<double> second_runs) {
  for (std::size_t b = 0; b < second_runs.size(); ++b) {
    c.repetitions.push_back(measured(second_runs[b], static_cast<int>(b), true));
    judge_against(c.expected, c.repetitions.back());
  }
}

// The machine's level in each block: slow drift and jumps far larger than the 5 % between the two.
const std::vector<double> kDrift = {1.0, 0.7, 1.3, 0.85, 1.15, 0.6, 1.4, 0.95};

TEST(BlockRanking, TheMachinesDriftBetweenBlocksCancelsWherePooledFiguresWouldTie) {
  std::vector<double> a, b;
  for (std::size_t i = 0; i < kDrift.size(); ++i) {
    a.push_back(1000 * kDrift[i]);
    b.push_back(950 * kDrift[i] * (i % 2 ? 1.004 : 0.996));  // 5 % slower in every block, give or take
  }
  RunResult run;
  run.cells = {strategy("fast", a), strategy("slow", b)};
  add_control(run.cells[0], std::vector<double>(a.begin(), a.end()));
  const Recommendation rec = recommend(run);
  ASSERT_EQ(rec.groups.size(), 1u);
  const RankingGroup& g = rec.groups[0];
  EXPECT_EQ(g.blocks, 8);
  ASSERT_EQ(g.strategies.size(), 2u);
  EXPECT_EQ(g.strategies[0].strategy, "fast/v");
  EXPECT_TRUE(g.strategies[0].rate.overlaps(g.strategies[1].rate));  // absolute figures: tied by the drift
  EXPECT_NEAR(g.strategies[1].vs_leader.mean, -0.05, 0.005);
  EXPECT_LT(g.strategies[1].vs_leader.hi, -0.04);
  EXPECT_FALSE(g.strategies[1].tied_with_best);
  EXPECT_TRUE(g.strategies[0].settled);
  EXPECT_EQ(g.best_strategies(), std::vector<std::string>{"fast/v"});
  // Said as hyperfine says a ratio: the leader ran 1.05 ± 0.00 times as fast.
  EXPECT_EQ(g.verdict.rfind("fast/v ran 1.05 ± 0.00 times as fast as slow/v (8 blocks)", 0), 0u) << g.verdict;
  EXPECT_EQ(g.start_methods, "only fork measured (launch 10 ms)");
  EXPECT_NE(g.verdict.find("8 blocks"), std::string::npos) << g.verdict;
  ASSERT_TRUE(g.control.has_value());
  EXPECT_DOUBLE_EQ(g.control->margin(), 0);  // the same figures twice: no difference at all
}

TEST(BlockRanking, ATieIsStatedWithEachStrategysRatioToTheLeader) {
  std::vector<double> a, b;
  for (std::size_t i = 0; i < kDrift.size(); ++i) {
    a.push_back(1000 * kDrift[i] * (i % 2 ? 1.03 : 0.97));
    b.push_back(1000 * kDrift[i] * (i % 3 ? 0.98 : 1.02));
  }
  RunResult run;
  run.cells = {strategy("one", a), strategy("two", b)};
  const Recommendation rec = recommend(run);
  const RankingGroup& g = rec.groups.at(0);
  EXPECT_EQ(g.best_strategies().size(), 2u);
  EXPECT_FALSE(g.strategies[0].settled);  // more blocks might part them
  EXPECT_EQ(g.verdict.rfind("not told apart after 8 blocks: ", 0), 0u) << g.verdict;
  EXPECT_NE(g.verdict.find("two/v (× "), std::string::npos) << g.verdict;
  EXPECT_NE(g.verdict.find(" ± "), std::string::npos) << g.verdict;
}

TEST(BlockRanking, TheControlsMarginTiesWhatIsCloserThanAStrategyLandsFromItself) {
  std::vector<double> a, b, again;
  for (std::size_t i = 0; i < kDrift.size(); ++i) {
    a.push_back(1000 * kDrift[i]);
    b.push_back(990 * kDrift[i] * (i % 2 ? 1.001 : 0.999));  // 1 % behind, its interval well apart
    again.push_back(1000 * kDrift[i] * (i % 2 ? 1.03 : 0.97));  // the control lands ±3 % from itself
  }
  RunResult run;
  run.cells = {strategy("fast", a), strategy("close", b)};
  add_control(run.cells[0], again);
  const RankingGroup g = recommend(run).groups.at(0);
  ASSERT_TRUE(g.control.has_value());
  EXPECT_GT(g.control->margin(), 0.02);
  EXPECT_DOUBLE_EQ(g.tie_margin, g.control->margin());
  EXPECT_LT(g.strategies[1].vs_leader.hi, 0);  // apart by intervals ...
  EXPECT_TRUE(g.strategies[1].tied_by_margin);  // ... but closer than the control's own spread
  EXPECT_TRUE(g.strategies[0].settled);
  // --tie-margin given replaces the control's margin.
  run.repetitions.tie_margin = 0.001;
  run.repetitions.tie_margin_given = true;
  EXPECT_FALSE(recommend(run).groups.at(0).strategies[1].tied_with_best);
}

TEST(BlockRanking, BehindOnlyWhenTheWholeIntervalIsBeyondTheMargin) {
  std::vector<double> a, b, again;
  for (std::size_t i = 0; i < kDrift.size(); ++i) {
    a.push_back(1000 * kDrift[i]);
    b.push_back(950 * kDrift[i] * (i % 2 ? 1.03 : 0.97));  // 5 % behind, give or take 3 %
    again.push_back(1000 * kDrift[i] * (i % 2 ? 1.035 : 0.965));
  }
  RunResult run;
  run.cells = {strategy("fast", a), strategy("noisy", b)};
  add_control(run.cells[0], again);
  const RankingGroup g = recommend(run).groups.at(0);
  const MeanInterval& v = g.strategies[1].vs_leader;
  ASSERT_LT(v.mean, -g.tie_margin);  // its mean is beyond the margin ...
  ASSERT_LT(v.hi, 0);                // ... its interval apart from 0 ...
  ASSERT_GT(v.hi, -g.tie_margin);    // ... but reaching within the margin
  EXPECT_TRUE(g.strategies[1].tied_by_margin);
  EXPECT_EQ(g.best_strategies().size(), 2u);
}

TEST(BlockRanking, OneBlockTellsNothing) {
  RunResult run;
  run.cells = {strategy("one", {1000}), strategy("two", {500})};
  const RankingGroup g = recommend(run).groups.at(0);
  EXPECT_EQ(g.blocks, 1);
  EXPECT_NE(g.verdict.find("one block tells nothing from noise"), std::string::npos) << g.verdict;
}

TEST(BlockRanking, BlockNumbersAndTheControlSurviveTheResultsFile) {
  RunResult run;
  run.cells = {strategy("one", {1000, 990, 1010}), strategy("two", {900, 880, 910})};
  add_control(run.cells[0], {995, 1000, 1005});
  run.repetitions.blocks = true;
  const RunResult back = results_from_json(results_to_json(run));
  ASSERT_EQ(back.cells[0].repetitions.size(), 7u);
  EXPECT_EQ(back.cells[0].repetitions[0].block, -1);
  EXPECT_EQ(back.cells[0].repetitions[3].block, 2);
  EXPECT_TRUE(back.cells[0].repetitions[6].control);
  EXPECT_TRUE(back.repetitions.blocks);
  const nlohmann::json rec = recommendation_json(recommend(back));
  EXPECT_EQ(rec["groups"][0]["blocks"], 3);
  EXPECT_EQ(rec["groups"][0]["control"]["blocks"], 3);
  EXPECT_LT(rec["groups"][0]["strategies"][1]["vs_leader"]["mean"].get<double>(), -0.08);
}

// The scheduler, with each run's figure made up: the cell's rate times the block's level (the same
// for every contender of a block) and the control's second run a little off.
struct FakeRuns {
  std::vector<CellResult> cells;
  std::vector<std::pair<std::size_t, bool>> ran;  // (cell, control) in order
  std::map<std::size_t, double> rate;
  RunInBlock runner() {
    return [this](std::size_t cell, int block, bool control) {
      const double wobble = control ? 1.01 : block % 2 ? 1.02 : 0.98;
      Repetition r = measured(rate[cell] * wobble, block, control);
      judge_against(cells[cell].expected, r);
      cells[cell].repetitions.push_back(r);
      ran.emplace_back(cell, control);
    };
  }
};

TEST(RankingBlocks, EveryContenderOnceTheControlTwiceInOrdersThatDiffer) {
  FakeRuns f;
  f.cells = {strategy("a", {}, 1000), strategy("b", {}, 900), strategy("c", {}, 800)};
  f.rate = {{0, 1000}, {1, 900}, {2, 800}};
  BlockPolicy p;
  p.enabled = true;
  p.adaptive = false;
  p.min_blocks = 6;
  double t = 0;
  const BlocksRan ran = run_ranking_blocks(f.cells, p, f.runner(), [&] { return t += 1; }, [](const std::string&) {});
  EXPECT_EQ(ran.rounds, 6);
  EXPECT_EQ(ran.groups, 1u);
  ASSERT_EQ(f.ran.size(), 6u * 4);
  std::set<std::vector<std::pair<std::size_t, bool>>> orders;
  for (std::size_t b = 0; b < 6; ++b) {
    const std::vector<std::pair<std::size_t, bool>> block(f.ran.begin() + b * 4, f.ran.begin() + b * 4 + 4);
    std::multiset<std::size_t> cells;
    for (const auto& [cell, control] : block) cells.insert(cell);
    EXPECT_EQ(cells, (std::multiset<std::size_t>{0, 0, 1, 2})) << "block " << b;  // the fastest is the control
    orders.insert(block);
  }
  EXPECT_GT(orders.size(), 1u);  // 6 blocks in one order: not shuffled (1 in 12^5 by chance)
}

TEST(RankingBlocks, AGroupStopsOnceItsLeaderIsToldApartNotBeforeTheFewest) {
  FakeRuns f;
  f.cells = {strategy("a", {}, 1000), strategy("b", {}, 700)};
  f.rate = {{0, 1000}, {1, 700}};
  BlockPolicy p;
  p.enabled = true;
  p.min_blocks = 5;
  p.max_blocks = 20;
  p.budget_s = 1e9;
  const BlocksRan ran = run_ranking_blocks(f.cells, p, f.runner(), [] { return 0.0; }, [](const std::string&) {});
  EXPECT_EQ(ran.rounds, 5);
  EXPECT_FALSE(ran.budget_ran_out);
}

TEST(RankingBlocks, ATiedGroupGoesOnToTheMostThenTheBudgetStopsIt) {
  FakeRuns f;
  f.cells = {strategy("a", {}, 1000), strategy("b", {}, 1000)};
  f.rate = {{0, 1000}, {1, 1000}};
  BlockPolicy p;
  p.enabled = true;
  p.min_blocks = 2;
  p.max_blocks = 9;
  p.budget_s = 1e9;
  EXPECT_EQ(run_ranking_blocks(f.cells, p, f.runner(), [] { return 0.0; }, [](const std::string&) {}).rounds, 9);

  FakeRuns g;
  g.cells = {strategy("a", {}, 1000), strategy("b", {}, 1000)};
  g.rate = {{0, 1000}, {1, 1000}};
  double now = 0;
  p.max_blocks = 100;
  p.budget_s = 10;  // each run costs 1 s (its wall_s): a block of 3 runs, three blocks fit
  const BlocksRan ran = run_ranking_blocks(g.cells, p, g.runner(), [&] { return now = static_cast<double>(g.ran.size()); },
                                           [](const std::string&) {});
  EXPECT_EQ(ran.rounds, 3);
  EXPECT_TRUE(ran.budget_ran_out);
  EXPECT_LE(now, 10);
}

// Two tied groups, one whose blocks cost ten times the other's: the budget stops the dear one short of
// its minimum, and the cheap one then fills its own minimum and goes no further.
TEST(RankingBlocks, NoGroupGetsABlockPastTheMinimumWhileTheBudgetStarvesAnother) {
  FakeRuns f;
  f.cells = {strategy("a", {}, 1000), strategy("b", {}, 1000), strategy("c", {}, 1000), strategy("d", {}, 1000)};
  f.cells[2].config.procs = f.cells[3].config.procs = 1;  // a second group
  for (int i : {0, 1}) f.cells[i].repetitions.back().wall_s = 10;  // the dear group: 30 s a block
  f.rate = {{0, 1000}, {1, 1000}, {2, 1000}, {3, 1000}};
  const RunInBlock dear_or_cheap = [&, run = f.runner()](std::size_t cell, int block, bool control) {
    run(cell, block, control);
    f.cells[cell].repetitions.back().wall_s = cell < 2 ? 10 : 1;
  };
  double spent = 0;
  std::size_t counted = 0;
  const auto elapsed = [&] {
    for (; counted < f.ran.size(); ++counted) spent += f.ran[counted].first < 2 ? 10 : 1;
    return spent;
  };
  BlockPolicy p;
  p.enabled = true;
  p.min_blocks = 5;
  p.max_blocks = 20;
  p.budget_s = 120;  // three dear blocks (90 s) beside cheap ones (3 s each): room for seven cheap ones
  const BlocksRan ran = run_ranking_blocks(f.cells, p, dear_or_cheap, elapsed, [](const std::string&) {});
  ASSERT_EQ(ran.completed.size(), 2u);
  int dear = 0, cheap = 0;
  for (const auto& [members, blocks] : ran.completed) (members.front() < 2 ? dear : cheap) = blocks;
  EXPECT_LT(dear, p.min_blocks);
  EXPECT_EQ(cheap, p.min_blocks) << "a tied group would go on to 20 blocks with the budget left: it stops at its minimum";
  EXPECT_TRUE(ran.budget_ran_out);

  // The report's line for the group the budget cut short says so.
  RunResult run;
  run.cells = f.cells;
  run.status = "complete";
  run.repetitions.blocks = run.repetitions.blocks_adaptive = true;
  run.repetitions.blocks_min = p.min_blocks;
  bool said = false;
  for (const RankingGroup& g : recommend(run).groups) {
    if (g.procs == 2) said = g.budget_note.find("the budget cut its blocks short: 3 of the 5 asked for") != std::string::npos;
  }
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace sharebench
