// Statistics and compare: p-values against scipy's, and the regression rules.
#include <cmath>

#include <gtest/gtest.h>

#include "reports/compare.h"
#include "harness/util/statistics.h"

namespace sharebench {
namespace {

TEST(MannWhitney, MatchesScipyTwoSided) {
  // Reference values: scipy.stats.mannwhitneyu(a, b, alternative='two-sided').pvalue
  EXPECT_NEAR(mann_whitney_u_p_value({1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}), 0.007936507936507936, 1e-12);
  EXPECT_NEAR(mann_whitney_u_p_value({1.1, 2.5, 3.3, 4.0}, {1.2, 2.6, 3.1, 4.2}), 0.8857142857142857, 1e-12);
  EXPECT_NEAR(mann_whitney_u_p_value({1, 2, 2, 3, 3, 3, 4, 5, 6, 7}, {3, 4, 5, 5, 6, 7, 8, 8, 9, 10}),
              0.01075233518163483, 1e-9);
  EXPECT_TRUE(std::isnan(mann_whitney_u_p_value({}, {1})));
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 2, 3}), 2.5);
}

CellResult cell(const char* variant, std::vector<double> steps_per_s, Verdict check = Verdict::kPass) {
  CellResult c;
  c.config.scenario = "locked";
  c.config.variant = variant;
  c.config.procs = 2;
  for (std::size_t i = 0; i < steps_per_s.size(); ++i) {
    Repetition r;
    r.index = static_cast<int>(i);
    r.metrics["steps_per_s"] = steps_per_s[i];
    r.checks = {{"mutual-exclusion", check, 0.0, "m"}};
    r.verdict = overall_verdict(r.checks);
    judge_against(c.expected, r);
    c.repetitions.push_back(r);
  }
  return c;
}

RunResult run_of(std::vector<CellResult> cells) {
  RunResult r;
  r.cells = std::move(cells);
  return r;
}

TEST(HodgesLehmann, EstimateAndExactInterval) {
  // 5 against 5 at 95 %: the interval is the 3rd smallest and 3rd largest of the 25 differences
  // (P(U <= 2) = 4/252 = 0.016 <= 0.025 < P(U <= 3) = 7/252).
  const ShiftEstimate s = hodges_lehmann_shift({1, 2, 3, 4, 5}, {11, 12, 13, 14, 15}, 0.05);
  EXPECT_DOUBLE_EQ(s.estimate, 10);
  ASSERT_TRUE(s.bounded);
  EXPECT_DOUBLE_EQ(s.lo, 7);
  EXPECT_DOUBLE_EQ(s.hi, 13);
  // 2 against 2 (and 3 against 3) can exclude nothing at 95 %.
  EXPECT_FALSE(hodges_lehmann_shift({1, 2}, {3, 4}, 0.05).bounded);
  EXPECT_FALSE(hodges_lehmann_shift({1, 2, 3}, {3, 4, 5}, 0.05).bounded);
  EXPECT_EQ(fewest_repetitions_for_interval(0.05), 4u);
}

TEST(Compare, DecidedSlowdownPastThresholdRegresses) {
  const auto base = run_of({cell("a", {100, 101, 99, 100, 102, 98})});
  const auto slow = run_of({cell("a", {80, 81, 79, 80, 82, 78})});
  const Comparison c = compare_runs(base, slow, {});
  ASSERT_EQ(c.changes.size(), 1u);
  EXPECT_EQ(c.changes[0].decision, Decision::kRegression);
  EXPECT_NEAR(c.changes[0].change, -0.2, 0.01);
  EXPECT_LT(c.changes[0].hi, 0);
  EXPECT_TRUE(c.regressed());
  const std::string md = render_comparison_markdown(c, {});
  EXPECT_NE(md.find("| `locked/a@fork:2` | 100 | 80 | -20.0 %"), std::string::npos) << md;
  EXPECT_NE(md.find("❌ regression"), std::string::npos);
}

TEST(Compare, NamesBothBuildsAndWarnsWhereTheirLibTorchOrThreadsDiffer) {
  auto base = run_of({cell("a", {100, 101, 99, 100, 102, 98})});
  auto cand = run_of({cell("a", {100, 101, 99, 100, 102, 98})});
  base.environment = {{"sharebench_build", "sharebench 0.1.0 (git aaa, Release)"}, {"libtorch", "1.13.0"},
                      {"threads_per_worker", "1"}, {"cores", "2"}};
  cand.environment = {{"sharebench_build", "sharebench 0.1.0 (git bbb, Release)"}, {"libtorch", "2.11.0"},
                      {"threads_per_worker", "4"}, {"cores", "2"}};
  const Comparison c = compare_runs(base, cand, {});
  EXPECT_EQ(c.builds.first, "sharebench 0.1.0 (git aaa, Release)");
  EXPECT_EQ(c.builds.second, "sharebench 0.1.0 (git bbb, Release)");
  const std::string md = render_comparison_markdown(c, {});
  EXPECT_NE(md.find("Base: sharebench 0.1.0 (git aaa, Release). Candidate: sharebench 0.1.0 (git bbb, Release)."),
            std::string::npos) << md;
  EXPECT_NE(md.find("differ in their LibTorch versions: 1.13.0 against 2.11.0"), std::string::npos) << md;
  EXPECT_NE(md.find("differ in their intra-op thread counts: 1 against 4"), std::string::npos) << md;
  EXPECT_EQ(md.find("core counts"), std::string::npos) << "the same core count is no difference";
}

TEST(Compare, NoChangeImprovementAndSmallChanges) {
  const auto base = run_of({cell("a", {100, 101, 99, 100, 102, 98})});
  const Comparison same = compare_runs(base, base, {});
  EXPECT_EQ(same.changes[0].decision, Decision::kNoChange);
  EXPECT_FALSE(same.regressed());
  EXPECT_FALSE(same.inconclusive());
  EXPECT_EQ(compare_runs(base, run_of({cell("a", {101, 99, 100, 102, 98, 100})}), {}).changes[0].decision,
            Decision::kNoChange);
  EXPECT_EQ(compare_runs(base, run_of({cell("a", {150, 151, 149, 150, 152, 148})}), {}).changes[0].decision,
            Decision::kImprovement);
  // A real 3 % slowdown inside the 5 % threshold is no change, not a regression.
  EXPECT_EQ(compare_runs(base, run_of({cell("a", {97, 98, 96, 97, 99, 95})}), {}).changes[0].decision,
            Decision::kNoChange);
}

TEST(Compare, TooFewRepetitionsOrTooMuchSpreadIsInconclusive) {
  const Comparison two = compare_runs(run_of({cell("a", {100, 101})}), run_of({cell("a", {50, 51})}), {});
  EXPECT_EQ(two.changes[0].decision, Decision::kInconclusive);
  EXPECT_FALSE(two.regressed());
  EXPECT_TRUE(two.inconclusive());
  EXPECT_EQ(two.changes[0].repetitions_needed, 4);
  // Spread of ±30 % around a 10 % slowdown: cannot tell, and says how many repetitions would.
  const Comparison noisy = compare_runs(run_of({cell("a", {70, 130, 100, 80, 120, 100})}),
                                        run_of({cell("a", {60, 120, 90, 70, 110, 90})}), {});
  EXPECT_EQ(noisy.changes[0].decision, Decision::kInconclusive);
  EXPECT_GT(noisy.changes[0].repetitions_needed, 6);
  EXPECT_NE(noisy.changes[0].note.find("repetitions per side"), std::string::npos);
}

TEST(Compare, OptionDifferencesSummarisedOnce) {
  auto slow_cell = cell("a", {80, 81, 79, 80});
  slow_cell.config.workload.step_delay_us = 20000;
  auto slow_b = cell("b", {80, 81, 79, 80});
  slow_b.config.workload.step_delay_us = 20000;
  const Comparison c = compare_runs(run_of({cell("a", {100, 101, 99, 100}), cell("b", {100, 101, 99, 100})}),
                                    run_of({slow_cell, slow_b}), {});
  ASSERT_EQ(c.option_differences.size(), 1u);
  EXPECT_EQ(c.option_differences[0], "workload.step_delay_us: 0 → 20000 (2 cells)");
}

TEST(Compare, CorrectnessRegressionAndOneSidedCells) {
  const auto base = run_of({cell("a", {100}), cell("gone", {100})});
  const auto cand = run_of({cell("a", {100}, Verdict::kFail), cell("new", {100})});
  EXPECT_EQ(cand.cells[0].outcome().kind, Outcome::kUnexpected);
  const Comparison c = compare_runs(base, cand, {});
  EXPECT_TRUE(c.regressed());
  ASSERT_FALSE(c.correctness.empty());
  EXPECT_EQ(c.correctness[0].cell, "locked/a@fork:2");
  EXPECT_EQ(c.only_in_base, std::vector<std::string>{"locked/gone@fork:2"});
  EXPECT_EQ(c.only_in_candidate, std::vector<std::string>{"locked/new@fork:2"});
  const std::string json = render_comparison_json(c, {});
  EXPECT_NE(json.find("\"regressed\": true"), std::string::npos);
}

}  // namespace
}  // namespace sharebench
