// The recommendation and --repetitions auto: the 95 % interval, ranking strategies with ties, start
// methods pooled unless told apart (and settling together), what is left out and why, the calibration pilot, the scheduler's order (a race: contenders first) and its budget,
// and the results file's form of all of it; and the guard on scenario options named like a flag.
#include <gtest/gtest.h>

#include <cmath>

#include "harness/plan/cell_flags.h"
#include "harness/plan/matrix.h"
#include "harness/results/recommendation.h"
#include "harness/results/results_json.h"
#include "harness/runner/adaptive_repetitions.h"
#include "harness/util/statistics.h"
#include "reports/html_answer.h"
#include "reports/recommendation_report.h"

namespace sharebench {
namespace {

CellResult training_cell(const char* variant, StartMethod start, int procs, std::vector<double> rates,
                         double wall_s = 1.0) {
  CellResult c;
  c.config.scenario = "hogwild";
  c.config.variant = variant;
  c.config.start = start;
  c.config.procs = procs;
  c.kind = ScenarioKind::kTraining;
  for (std::size_t i = 0; i < rates.size(); ++i) {
    Repetition r;
    r.index = static_cast<int>(i);
    r.wall_s = wall_s;
    r.checks = {{"liveness", Verdict::kPass, 0.0, ""}, {"convergence", Verdict::kPass, 1.0, ""}};  // NOLINT(check-id)
    r.metrics = {{"steps_per_s", rates[i]}, {"run_s", 0.5}, {"worker_uss_mb_peak", 12}, {"launch_s_max", 0.02}};
    r.verdict = overall_verdict(r.checks);
    judge_against(c.expected, r);
    c.repetitions.push_back(r);
  }
  return c;
}

TEST(MeanInterval, StudentTOnASmallSample) {
  const MeanInterval m = mean_interval_95({10, 12, 14});
  EXPECT_DOUBLE_EQ(m.mean, 12);
  EXPECT_NEAR(m.hi - m.mean, 4.303 * 2 / std::sqrt(3.0), 1e-9);  // s = 2, t(2) = 4.303
  EXPECT_NEAR(m.relative_half_width(), 4.969 / 12, 1e-3);
  EXPECT_FALSE(mean_interval_95({5}).bounded());
  EXPECT_TRUE(mean_interval_95({5}).overlaps(m));  // one value proves nothing against anything
  EXPECT_FALSE(mean_interval_95({1, 1.1, 0.9}).overlaps(m));
  EXPECT_NEAR(student_t_975(60), 2.0, 0.005);
}

TEST(Recommendation, RanksStrategiesStatesTiesAsTiesAndSaysByHowMuch) {
  RunResult run;
  run.cells.push_back(training_cell("lock-free", StartMethod::kFork, 2, {100, 101, 99, 100}));
  run.cells.push_back(training_cell("locked", StartMethod::kFork, 2, {80, 81, 79, 80}));
  Recommendation rec = recommend(run);
  ASSERT_EQ(rec.groups.size(), 1u);
  EXPECT_EQ(rec.groups[0].best(), std::vector<std::string>{"hogwild/lock-free@fork:2"});
  EXPECT_EQ(rec.groups[0].best_strategies(), std::vector<std::string>{"hogwild/lock-free"});
  EXPECT_EQ(rec.groups[0].verdict, "hogwild/lock-free ran 1.25 times as fast as hogwild/locked");
  EXPECT_EQ(rec.groups[0].start_methods, "only fork measured (launch 20 ms)");

  run.cells.push_back(training_cell("update-only", StartMethod::kFork, 2, {99, 102, 97, 100}));
  rec = recommend(run);
  EXPECT_EQ(rec.groups[0].best_strategies().size(), 2u);
  EXPECT_EQ(rec.groups[0].best().size(), 2u);
  EXPECT_NE(rec.groups[0].verdict.find("not told apart at this budget"), std::string::npos) << rec.groups[0].verdict;
  // a process count is a group of its own
  run.cells.push_back(training_cell("lock-free", StartMethod::kFork, 1, {60, 61, 59}));
  EXPECT_EQ(recommend(run).groups.size(), 2u);
}

// Intervals from one run do not hold the drift between runs: a strategy whose mean is within the tie
// margin of the fastest's is tied with it though their intervals part, and the verdict says why.
TEST(Recommendation, TiesStrategiesWithinTheTieMarginThoughTheirIntervalsPart) {
  RunResult run;
  run.cells.push_back(training_cell("lock-free", StartMethod::kFork, 2, {100, 101, 99, 100}));
  run.cells.push_back(training_cell("locked", StartMethod::kFork, 2, {90, 91, 89, 90}));
  run.cells.push_back(training_cell("update-only", StartMethod::kFork, 2, {87, 88, 86, 87}));
  Recommendation rec = recommend(run);
  ASSERT_EQ(rec.groups.size(), 1u);
  EXPECT_EQ(rec.tie_margin, kDefaultTieMargin);
  EXPECT_EQ(rec.groups[0].best_strategies(), (std::vector<std::string>{"hogwild/lock-free", "hogwild/locked"}));
  EXPECT_TRUE(rec.groups[0].strategies[1].tied_by_margin);
  EXPECT_FALSE(rec.groups[0].strategies[2].tied_with_best);  // 13 % behind
  EXPECT_EQ(rec.groups[0].verdict, "not told apart from run to run (means within the 12 % tie margin): "
                                   "hogwild/lock-free, hogwild/locked");
  // Every report marks the margin's tie apart from an overlap: ≈ rather than =.
  EXPECT_EQ(tie_mark(rec.groups[0].strategies[0]), "=");
  EXPECT_EQ(tie_mark(rec.groups[0].strategies[1]), "≈");
  EXPECT_EQ(tie_mark(rec.groups[0].strategies[2]), "");
  EXPECT_EQ(tie_mark(rec.groups[0].ranked[1]), "≈") << rec.groups[0].ranked[1].cell;
  run.repetitions.fixed = 4;
  const std::string console = render_recommendation_console(run, 5, false);
  EXPECT_NE(console.find("\n  ≈ hogwild/locked"), std::string::npos) << console;
  EXPECT_NE(console.find("\n  = hogwild/lock-free"), std::string::npos) << console;
  EXPECT_NE(console.find("\n    hogwild/update-only"), std::string::npos) << console;
  EXPECT_NE(render_recommendation_markdown(run).find("| ≈ | hogwild/locked |"), std::string::npos);
  EXPECT_NE(html_answer(run).section.find("<tr><td>≈</td><td>hogwild/locked</td>"), std::string::npos);
  // --tie-margin 0: the intervals alone decide.
  run.repetitions.tie_margin = 0;
  rec = recommend(run);
  EXPECT_EQ(rec.groups[0].best_strategies(), std::vector<std::string>{"hogwild/lock-free"});
  EXPECT_EQ(rec.groups[0].verdict.rfind("hogwild/lock-free ran 1.11 times as fast as hogwild/locked", 0), 0u) << rec.groups[0].verdict;
  // The margin travels with the results: a file read back ranks the same.
  run.repetitions.tie_margin = 0.2;
  const RunResult back = results_from_json(results_to_json(run));
  EXPECT_EQ(recommend(back).groups[0].best_strategies().size(), 3u);
}

// A start method changes how a worker begins, not its loop: start methods that ran alike are one
// measurement (their repetitions pooled: a narrower interval), and no start method is advised: the
// launches, measured, are said as figures.
TEST(Recommendation, PoolsStartMethodsThatRanAlikeAndAdvisesNoneOfThem) {
  RunResult run;
  run.cells.push_back(training_cell("lock-free", StartMethod::kSpawn, 2, {101, 97, 103}));
  run.cells.push_back(training_cell("lock-free", StartMethod::kFork, 2, {99, 100, 98}));
  run.cells.push_back(training_cell("lock-free", StartMethod::kForkserver, 2, {100, 104, 96}));
  run.cells[0].repetitions[0].metrics["launch_s_max"] = 0.6;
  for (Repetition& r : run.cells[1].repetitions) r.metrics["launch_s_max"] = 0.006;
  const Recommendation rec = recommend(run);
  ASSERT_EQ(rec.groups.size(), 1u);
  ASSERT_EQ(rec.groups[0].strategies.size(), 1u);
  const RankedStrategy& s = rec.groups[0].strategies[0];
  EXPECT_TRUE(s.pooled);
  EXPECT_EQ(s.rate.n, 9);
  EXPECT_NEAR(s.rate.mean, 99.777, 0.01);
  EXPECT_LT(s.rate.relative_half_width(), rec.groups[0].ranked[0].rate.relative_half_width());
  EXPECT_EQ(s.start, StartMethod::kFork);
  EXPECT_EQ(s.cell, "hogwild/lock-free@fork:2");
  EXPECT_EQ(rec.groups[0].best().size(), 3u);  // every start method is marked =
  EXPECT_EQ(rec.groups[0].start_methods, "not told apart (they ran alike); launch fork 6, forkserver 20, spawn 213 ms");
  EXPECT_EQ(rec.groups[0].verdict.find("start"), std::string::npos) << rec.groups[0].verdict;
  // Launches within 25 % or 5 ms of the quickest are alike: fork then, not a millisecond's winner.
  for (Repetition& r : run.cells[2].repetitions) r.metrics["launch_s_max"] = 0.005;
  EXPECT_EQ(recommend(run).groups[0].strategies[0].start, StartMethod::kFork);
  for (Repetition& r : run.cells[2].repetitions) r.metrics["launch_s_max"] = 0.0009;
  EXPECT_EQ(recommend(run).groups[0].strategies[0].start, StartMethod::kForkserver);
}

TEST(Recommendation, RanksAStrategyWhoseStartMethodsDifferByItsFastest) {
  RunResult run;
  run.cells.push_back(training_cell("lock-free", StartMethod::kSpawn, 2, {150, 151, 149, 150, 151, 149}));
  run.cells.push_back(training_cell("lock-free", StartMethod::kFork, 2, {100, 101, 99, 100, 101, 99}));
  run.cells.push_back(training_cell("locked", StartMethod::kFork, 2, {120, 121, 119}));
  const Recommendation rec = recommend(run);
  ASSERT_EQ(rec.groups[0].strategies.size(), 2u);
  const RankedStrategy& s = rec.groups[0].strategies[0];
  EXPECT_EQ(s.strategy, "hogwild/lock-free");
  EXPECT_FALSE(s.pooled);
  EXPECT_EQ(s.rate.n, 6);
  EXPECT_DOUBLE_EQ(s.rate.mean, 150);
  EXPECT_EQ(s.start, StartMethod::kSpawn);  // the fork cell runs slower: it does not count, whatever its launch
  EXPECT_EQ(rec.groups[0].best(), std::vector<std::string>{"hogwild/lock-free@spawn:2"});
  EXPECT_EQ(rec.groups[0].start_methods, "start it with spawn: told apart, fork ran slower; launch fork 20, spawn 20 ms");
  // Measured once each, start methods cannot be shown to run alike: nothing is pooled.
  RunResult once;
  once.cells.push_back(training_cell("lock-free", StartMethod::kSpawn, 2, {150}));
  once.cells.push_back(training_cell("lock-free", StartMethod::kFork, 2, {100}));
  EXPECT_FALSE(recommend(once).groups[0].strategies[0].pooled);
  EXPECT_EQ(recommend(once).groups[0].strategies[0].rate.n, 1);
  // Nor told apart: advice from one run each would move from run to run.
  EXPECT_EQ(recommend(once).groups[0].start_methods.rfind("not told apart (one run each)", 0), 0u)
      << recommend(once).groups[0].start_methods;
}

// Start methods whose intervals part after a few repetitions each are not yet told apart: a spell of
// the machine parts them as often as a real difference, and the fastest of them is the luckiest (the
// winner's curse). The strategy is ranked by all its repetitions, and the advice says why.
TEST(Recommendation, PoolsStartMethodsThatPartedBeforeSixRepetitionsEach) {
  RunResult run;
  run.cells.push_back(training_cell("lock-free", StartMethod::kForkserver, 2, {150, 151, 149}));
  run.cells.push_back(training_cell("lock-free", StartMethod::kFork, 2, {100, 101, 99, 100, 101, 99}));
  run.cells.push_back(training_cell("locked", StartMethod::kFork, 2, {135, 136, 134}));
  const Recommendation rec = recommend(run);
  ASSERT_EQ(rec.groups[0].strategies.size(), 2u);
  // Pooled, lock-free (9 repetitions, mean 116.7) is no longer ranked by its lucky forkserver's 150.
  const RankedStrategy& first = rec.groups[0].strategies[0];
  EXPECT_EQ(first.strategy, "hogwild/locked") << rec.groups[0].verdict;
  const RankedStrategy& lock_free = rec.groups[0].strategies[1];
  EXPECT_TRUE(lock_free.pooled);
  EXPECT_EQ(lock_free.rate.n, 9);
  EXPECT_NEAR(lock_free.rate.mean, 116.67, 0.01);
  EXPECT_EQ(lock_free.start, StartMethod::kFork);
  // Where such a strategy leads, the advice says its start methods were not told apart, and why.
  RunResult alone;
  alone.cells = {run.cells[0], run.cells[1]};
  EXPECT_EQ(recommend(alone).groups[0].start_methods.rfind("not told apart (their intervals part, but from fewer than 6 "
                                                           "repetitions)", 0),
            0u) << recommend(alone).groups[0].start_methods;
  // Told apart once each start method has six repetitions and the intervals still part.
  for (double v : {150.0, 151.0, 149.0}) {
    Repetition r = run.cells[0].repetitions.front();
    r.index = static_cast<int>(run.cells[0].repetitions.size());
    r.metrics["steps_per_s"] = v;
    run.cells[0].repetitions.push_back(r);
  }
  const RankedStrategy apart = recommend(run).groups[0].strategies[0];
  EXPECT_EQ(apart.strategy, "hogwild/lock-free");
  EXPECT_FALSE(apart.pooled);
  EXPECT_DOUBLE_EQ(apart.rate.mean, 150);
}

TEST(Recommendation, LeavesOutWhatCannotBeRankedAndSaysWhy) {
  RunResult run;
  CellResult lock = training_cell("x", StartMethod::kFork, 2, {1e6, 1e6, 1e6});
  lock.kind = ScenarioKind::kLockOnly;
  CellResult bug = training_cell("y", StartMethod::kFork, 2, {100, 100, 100});
  bug.known_bug = true;
  CellResult unknown = training_cell("z", StartMethod::kFork, 2, {100, 100, 100});
  unknown.repetitions[1].checks[0].verdict = Verdict::kUnknown;
  CellResult unconverged = training_cell("w", StartMethod::kFork, 2, {100, 100, 100});
  for (Repetition& r : unconverged.repetitions) r.checks.pop_back();
  for (const CellResult& c : {lock, bug, unknown, unconverged}) run.cells.push_back(c);
  const Recommendation rec = recommend(run);
  EXPECT_TRUE(rec.empty());
  ASSERT_EQ(rec.excluded.size(), 4u);
  EXPECT_EQ(rec.excluded[0].category, "not throughput");
  EXPECT_EQ(rec.excluded[1].category, "planted bug");
  EXPECT_EQ(rec.excluded[2].category, "check undecided");  // an unknown verdict is not a pass
  EXPECT_EQ(rec.excluded[3].category, "no convergence verdict");
}

TEST(AutoRepetitions, ACalibrationPilotKeepsItsChecksButNotItsFigures) {
  CellResult c = training_cell("lock-free", StartMethod::kFork, 2, {1e6, 100, 102, 98});
  c.repetitions[0].calibration = true;
  EXPECT_DOUBLE_EQ(throughput_interval(c).mean, 100);
  EXPECT_EQ(throughput_interval(c).n, 3);

  CellResult pilot = training_cell("lock-free", StartMethod::kFork, 2, {5000});
  pilot.config.workload.steps = 1000;
  pilot.repetitions[0].metrics["run_s"] = 0.05;
  AutoRepetitions policy;
  policy.min_timed_s = 0.3;
  EXPECT_EQ(calibrated_steps(pilot, policy), std::optional<std::int64_t>(8000));  // ceil(0.3 / 0.05 * 1.2) = 8
  pilot.repetitions[0].metrics["run_s"] = 0.4;
  EXPECT_EQ(calibrated_steps(pilot, policy), std::nullopt);
  // Judged at the steady rate when the figures say it: 1000 steps at 20000 steps/s take 0.05 s.
  pilot.repetitions[0].metrics = {{"run_s", 0.1}, {"steps_total", 1000}, {"steps_per_s", 20000}};
  EXPECT_EQ(calibrated_steps(pilot, policy), std::optional<std::int64_t>(8000));
  // A later repetition that still timed too little raises them again; at the limit, no more.
  pilot.repetitions.push_back(pilot.repetitions[0]);
  pilot.config.workload.steps = 8000;
  pilot.repetitions[1].metrics = {{"run_s", 0.15}};
  EXPECT_EQ(calibrated_steps(pilot, policy), std::optional<std::int64_t>(24000));  // ceil(0.3 / 0.15 * 1.2) = 3
  pilot.config.workload.steps = kMaxSteps;
  EXPECT_EQ(calibrated_steps(pilot, policy), std::nullopt);
}

TEST(AutoRepetitions, RacesTheContendersFirstAndStopsAtTheBudget) {
  AutoRepetitions policy;
  policy.budget_s = 100;
  std::vector<CellResult> cells;
  cells.push_back(training_cell("lock-free", StartMethod::kFork, 2, {100, 110, 90}));    // leader, unsettled (±25 %)
  cells.push_back(training_cell("locked", StartMethod::kFork, 2, {20, 21, 19}));         // far behind: settled? no, wide enough
  cells.push_back(training_cell("update-only", StartMethod::kFork, 2, {95}));            // one repetition only
  // Fewer than two measured repetitions first, whatever else.
  EXPECT_EQ(next_repetition(cells, policy, 0), std::optional<std::size_t>(2));
  cells[2] = training_cell("update-only", StartMethod::kFork, 2, {20.5, 21.5, 19.5, 20});
  cells[1].repetitions[0].metrics["steps_per_s"] = 10;  // widen the far one: unsettled, but out of the race
  // The leader (a contender) before the slow cell, though the slow cell's interval is wider relative to its mean.
  EXPECT_EQ(next_repetition(cells, policy, 0), std::optional<std::size_t>(0));
  // Nothing fits in the budget left: stop.
  EXPECT_EQ(next_repetition(cells, policy, 99.5), std::nullopt);
  // Settled cells get nothing more.
  std::vector<CellResult> settled{training_cell("lock-free", StartMethod::kFork, 2, {100, 100.5, 99.5})};
  EXPECT_TRUE(repetitions_settled(settled[0], policy));
  EXPECT_EQ(next_repetition(settled, policy, 0), std::nullopt);
  EXPECT_TRUE(unsettled_cells(settled, policy).empty());
}

TEST(AutoRepetitions, StartMethodsThatRanAlikeSettleTogether) {
  AutoRepetitions policy;
  policy.budget_s = 100;
  // Each ±15 % alone; pooled, nine repetitions are within ±4 %.
  std::vector<CellResult> cells;
  cells.push_back(training_cell("lock-free", StartMethod::kFork, 2, {100, 106, 94}));
  cells.push_back(training_cell("lock-free", StartMethod::kSpawn, 2, {101, 107, 95}));
  cells.push_back(training_cell("lock-free", StartMethod::kForkserver, 2, {99, 105, 93}));
  for (const CellResult& c : cells) EXPECT_FALSE(repetitions_settled(c, policy));
  EXPECT_TRUE(unsettled_cells(cells, policy).empty());
  EXPECT_EQ(next_repetition(cells, policy, 0), std::nullopt);
  // Below its minimum of repetitions a cell still gets its own, pooled or not.
  cells[2] = training_cell("lock-free", StartMethod::kForkserver, 2, {99, 101});
  EXPECT_EQ(next_repetition(cells, policy, 0), std::optional<std::size_t>(2));
}

TEST(AutoRepetitions, ThePolicyAndTheAnswerAreInTheResultsFile) {
  RunResult run;
  run.run_id = "r";
  run.repetitions = RepetitionPolicy{true, 3, 0.05, 600, 0.3, true};
  run.cells.push_back(training_cell("lock-free", StartMethod::kFork, 2, {1e6, 100, 101, 99}));
  run.cells[0].repetitions[0].calibration = true;
  const nlohmann::json j = results_to_json(run);
  EXPECT_EQ(j.at("repetition_policy").at("budget_s"), 600);
  EXPECT_EQ(j.at("recommendation").at("groups").at(0).at("best").at(0), "hogwild/lock-free@fork:2");
  EXPECT_NEAR(j.at("recommendation").at("groups").at(0).at("ranked").at(0).at("mean").get<double>(), 100, 1e-9);
  EXPECT_EQ(j.at("recommendation").at("groups").at(0).at("best_strategies").at(0), "hogwild/lock-free");
  EXPECT_EQ(j.at("recommendation").at("groups").at(0).at("strategies").at(0).at("start"), "fork");
  EXPECT_EQ(j.at("recommendation").at("groups").at(0).at("strategies").at(0).at("repetitions"), 3);
  const RunResult back = results_from_json(j);
  EXPECT_TRUE(back.repetitions.automatic);
  EXPECT_TRUE(back.repetitions.budget_ran_out);
  EXPECT_TRUE(back.cells[0].repetitions[0].calibration);
  EXPECT_FALSE(back.cells[0].repetitions[1].calibration);
}

}  // namespace
}  // namespace sharebench

namespace sharebench {
namespace {

// Not the recommendation's, but of the same wave: a scenario option that would shadow a flag.
TEST(ScenarioOptions, AnOptionNamedLikeAHarnessFlagIsRefusedNamingTheScenario) {
  try {
    check_option_name("mine", "steps", cell_flags());
    FAIL() << "--steps was taken";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("scenario mine declares an option --steps"), std::string::npos) << e.what();
  }
  EXPECT_THROW(check_option_name("mine", "out", {}), std::logic_error);  // a command's own flag
  EXPECT_NO_THROW(check_option_name("mine", "increments-per-step", cell_flags()));
}

}  // namespace
}  // namespace sharebench
