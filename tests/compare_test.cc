// Statistics and compare: p-values against scipy's, and the regression rules.
#include <cmath>

#include <gtest/gtest.h>

#include "reports/compare.h"
#include "reports/statistics.h"

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

TEST(Compare, SignificantSlowdownPastThresholdRegresses) {
  const auto base = run_of({cell("a", {100, 101, 99, 100, 102, 98})});
  const auto slow = run_of({cell("a", {80, 81, 79, 80, 82, 78})});
  const Comparison c = compare_runs(base, slow, {});
  ASSERT_EQ(c.changes.size(), 1u);
  EXPECT_TRUE(c.changes[0].regression);
  EXPECT_NEAR(c.changes[0].change, -0.2, 1e-9);
  EXPECT_TRUE(c.regressed());
  EXPECT_NE(render_comparison_markdown(c, {}).find("`locked/a@fork:2` | 100 | 80 | -20.0 %"), std::string::npos);
}

TEST(Compare, NoiseAndSpeedupsDoNotRegress) {
  const auto base = run_of({cell("a", {100, 101, 99, 100, 102, 98})});
  EXPECT_FALSE(compare_runs(base, run_of({cell("a", {101, 99, 100, 102, 98, 100})}), {}).regressed());
  EXPECT_FALSE(compare_runs(base, run_of({cell("a", {150, 151, 149, 150, 152, 148})}), {}).regressed());
  // Significant but within the threshold.
  EXPECT_FALSE(compare_runs(base, run_of({cell("a", {97, 98, 96, 97, 99, 95})}), {}).regressed());
}

TEST(Compare, TooFewRepetitionsCannotFailButSaySo) {
  const Comparison c = compare_runs(run_of({cell("a", {100})}), run_of({cell("a", {50})}), {});
  EXPECT_FALSE(c.regressed());
  EXPECT_NE(c.changes[0].note.find("cannot reach"), std::string::npos);
  ASSERT_FALSE(c.warnings.empty());
  EXPECT_NE(c.warnings[0].find("only 1 repetition"), std::string::npos);
}

TEST(Compare, CorrectnessRegressionAndOneSidedCells) {
  const auto base = run_of({cell("a", {100}), cell("gone", {100})});
  const auto cand = run_of({cell("a", {100}, Verdict::kFail), cell("new", {100})});
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
