// The results model: verdict arithmetic, the expectation judge, and the JSON round trip.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <fstream>

#include "harness/proc/sanitizer_reports.h"

#include "harness/results/results.h"
#include "harness/results/results_json.h"

namespace sharebench {
namespace {

Repetition with_checks(std::vector<Check> checks) {
  Repetition r;
  r.checks = std::move(checks);
  r.verdict = overall_verdict(r.checks);
  return r;
}

TEST(Verdicts, FailBeatsUnknownBeatsPass) {
  EXPECT_EQ(overall_verdict({{"a", Verdict::kPass, {}, ""}}), Verdict::kPass);
  EXPECT_EQ(overall_verdict({{"a", Verdict::kPass, {}, ""}, {"b", Verdict::kUnknown, {}, ""}}), Verdict::kUnknown);
  EXPECT_EQ(overall_verdict({{"a", Verdict::kFail, {}, ""}, {"b", Verdict::kUnknown, {}, ""}}), Verdict::kFail);
}

TEST(Expectation, CleanVariantMustPassEverything) {
  Repetition ok = with_checks({{"x", Verdict::kPass, {}, ""}});
  judge_against(Expectation{}, ok);
  EXPECT_TRUE(ok.as_expected);
  Repetition bad = with_checks({{"x", Verdict::kPass, {}, ""}, {"y", Verdict::kUnknown, {}, ""}});
  judge_against(Expectation{}, bad);
  EXPECT_FALSE(bad.as_expected);
  EXPECT_NE(bad.expectation_message.find("y (unknown)"), std::string::npos);
}

TEST(Expectation, PlantedBugMustBeCaught) {
  const Expectation e{{"mutual-exclusion"}, {"lost-updates"}};
  Repetition caught = with_checks({{"mutual-exclusion", Verdict::kFail, 3.0, ""},
                                   {"lost-updates", Verdict::kFail, 1.0, ""}});
  judge_against(e, caught);
  EXPECT_TRUE(caught.as_expected);
  Repetition missed = with_checks({{"mutual-exclusion", Verdict::kPass, 0.0, ""}});
  judge_against(e, missed);
  EXPECT_FALSE(missed.as_expected);
  EXPECT_NE(missed.expectation_message.find("NOT caught"), std::string::npos);
  Repetition extra = with_checks({{"mutual-exclusion", Verdict::kFail, 1.0, ""}, {"liveness", Verdict::kFail, 1.0, ""}});
  judge_against(e, extra);
  EXPECT_FALSE(extra.as_expected);
}

TEST(Exposure, ACheckWithoutItsOwnCountGetsTheStepsItWatched) {
  Repetition rep;
  rep.wall_s = 0.25;
  rep.checks = {{"liveness", Verdict::kPass, {}, "ok"},
                {"mutual-exclusion", Verdict::kPass, 0.0, "", Exposure{7, "acquisitions found the lock held"}}};
  WorkerRecord a, b;
  a.steps = 100;
  b.steps = 50;
  rep.workers = {a, b};
  give_every_check_an_exposure(rep);
  ASSERT_TRUE(rep.checks[0].exposure.has_value());
  EXPECT_EQ(rep.checks[0].exposure->count, 150);
  EXPECT_EQ(rep.checks[0].exposure->what, "worker steps it watched");
  EXPECT_EQ(rep.checks[1].exposure->count, 7) << "a check's own count is kept";
  EXPECT_EQ(rep.checks[0].message, "ok") << "the message is left as the check wrote it";
  rep.workers.clear();  // a program that counts no steps: the repetition's time
  rep.checks[0].exposure.reset();
  give_every_check_an_exposure(rep);
  EXPECT_DOUBLE_EQ(rep.checks[0].exposure->count, 250);
  mark_unexercised_checks(rep.checks);
  EXPECT_EQ(rep.checks[0].verdict, Verdict::kPass);
}

TEST(Exposure, SaysHowOftenACheckWasPutToTheTestAndWhatToRaiseWhenNever) {
  EXPECT_EQ(exposure_text(Exposure{1204, "acquisitions found the lock held"}, "more --procs"),
            "exercised: 1 204 acquisitions found the lock held");
  EXPECT_EQ(exposure_text(Exposure{0, "acquisitions found the lock held"}, "more --procs"),
            "not exercised: no acquisitions found the lock held (more --procs to put it to the test)");
}

TEST(Exposure, APassWithNothingExercisedIsNotAPass) {
  std::vector<Check> checks = {{"mutual-exclusion", Verdict::kPass, 0.0, "m", Exposure{0, "acquisitions found the lock held"}},
                               {"lost-updates", Verdict::kPass, 0.0, "m", Exposure{3, "acquisitions found the lock held"}},
                               {"convergence", Verdict::kPass, 1.0, "m"},
                               {"replicas-agree", Verdict::kFail, 2.0, "m", Exposure{0, "rounds"}}};
  mark_unexercised_checks(checks);
  EXPECT_EQ(checks[0].verdict, Verdict::kNotExercised);
  EXPECT_EQ(checks[1].verdict, Verdict::kPass);
  EXPECT_EQ(checks[2].verdict, Verdict::kPass);
  EXPECT_EQ(checks[3].verdict, Verdict::kFail);  // a failure is its own proof that the situation arose
  EXPECT_EQ(to_string(Verdict::kNotExercised), "not-exercised");
  EXPECT_EQ(parse_verdict("not-exercised"), Verdict::kNotExercised);
}

TEST(Expectation, ACleanCellWithAnUnexercisedCheckIsAsExpectedAndSaysSo) {
  Repetition rep = with_checks({{"mutual-exclusion", Verdict::kNotExercised, 0.0, "m"}, {"liveness", Verdict::kPass, 0.0, ""}});
  judge_against(Expectation{}, rep);
  EXPECT_TRUE(rep.as_expected);
  EXPECT_EQ(rep.expectation_message, "clean, as expected (not exercised: mutual-exclusion)");
  EXPECT_EQ(overall_verdict(rep.checks), Verdict::kPass);
}

TEST(Expectation, APlantedBugWhoseCheckWasNotExercisedIsNeitherCaughtNorMissed) {
  Repetition rep = with_checks({{"replicas-agree", Verdict::kNotExercised, std::nullopt, "no round"}});
  judge_against(Expectation{{"replicas-agree"}}, rep);
  EXPECT_FALSE(rep.as_expected);  // not a catch: the cell is not green
  EXPECT_NE(rep.expectation_message.find("planted bug not exercised: replicas-agree"), std::string::npos)
      << rep.expectation_message;
  EXPECT_EQ(rep.expectation_message.find("NOT caught"), std::string::npos) << rep.expectation_message;
  CellResult cell;
  cell.expected = Expectation{{"replicas-agree"}};
  cell.known_bug = true;
  cell.repetitions.push_back(rep);
  const CellOutcome o = cell.outcome();
  ASSERT_FALSE(o.evidence.empty());
  EXPECT_EQ(o.evidence[0].verdict, "not-exercised");
}

// Many reports of one race (a loop over a buffer) fill the cap; a second race, reported after them,
// must still be in the results (the TSan suite once lost hogwild's apply_sgd race that way).
TEST(SanitizerReports, EveryDistinctRaceIsKeptBeforeRepeatsFillTheCap) {
  char tmpl[] = "/tmp/sanitizer-reports-test-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  std::ofstream f(dir + "/sanitizer.42");
  const std::string padding(4000, 'x');
  auto report = [&](const std::string& where) {
    f << "==================\nWARNING: ThreadSanitizer: data race (pid=42)\n  #0 " << where << "\n  " << padding
      << "\nSUMMARY: ThreadSanitizer: data race " << where << "\n==================\n";
  };
  for (int i = 0; i < 40; ++i) report("guarded_section.cc:23");  // 40 x 4 KiB: more than the 64 KiB cap
  report("standard_workload.cc:103 in apply_sgd");
  f << "ThreadSanitizer: reported 41 warnings\n";
  f.close();
  const SanitizerReports r = read_sanitizer_reports(dir);
  EXPECT_EQ(r.reports, 41);
  EXPECT_LE(r.text.size(), kMaxReportBytes);
  EXPECT_NE(r.text.find("apply_sgd"), std::string::npos);
  EXPECT_NE(r.text.find("guarded_section.cc:23"), std::string::npos);
  EXPECT_EQ(r.first_summary, "ThreadSanitizer: data race guarded_section.cc:23");
}

TEST(ResultsJson, ACheckKeepsItsExposureAndOneWithoutHasNone) {
  RunResult run;
  run.run_id = "r1";
  run.status = "complete";
  CellResult cell;
  cell.config.scenario = "locked";
  cell.config.variant = "whole-step";
  Repetition rep = with_checks({{"mutual-exclusion", Verdict::kPass, 0.0, "m", Exposure{6, "acquisitions found the lock held"}},
                                {"convergence", Verdict::kPass, 1.0, "m"}});
  cell.repetitions.push_back(rep);
  run.cells.push_back(cell);
  const auto j = results_to_json(run);
  const auto& checks = j.at("cells").at(0).at("repetitions").at(0).at("checks");
  EXPECT_EQ(checks.at(0).at("exposure").at("count"), 6);
  EXPECT_FALSE(checks.at(1).contains("exposure"));
  const RunResult back = results_from_json(j);
  const auto& back_checks = back.cells.at(0).repetitions.at(0).checks;
  ASSERT_TRUE(back_checks.at(0).exposure.has_value());
  EXPECT_EQ(back_checks.at(0).exposure->what, "acquisitions found the lock held");
  EXPECT_FALSE(back_checks.at(1).exposure.has_value());
}

TEST(ResultsJson, RoundTripsAndRejectsForeignFiles) {
  RunResult run;
  run.run_id = "r1";
  run.started_at = "2026-01-01T00:00:00Z";
  run.status = "complete";
  run.command = {"sharebench", "run"};
  run.environment = {{"cores", "2"}};
  CellResult cell;
  cell.config.scenario = "locked";
  cell.config.variant = "whole-step";
  cell.config.procs = 2;
  cell.expected = Expectation{{"a"}, {"b"}};
  cell.repro = "sharebench run ...";
  Repetition rep = with_checks({{"a", Verdict::kFail, 2.5, "m"}});
  rep.metrics["steps_per_s"] = 100;
  rep.series.push_back(Series{"loss", 1, {{1, 0.5, 2.0}}});
  WorkerRecord worker;
  worker.rank = 1;
  worker.pid = 42;
  worker.exited = true;
  worker.steps = 10;
  worker.launch_s = 0.01;
  rep.workers.push_back(worker);
  judge_against(cell.expected, rep);
  cell.repetitions.push_back(rep);
  run.cells.push_back(cell);

  const auto j = results_to_json(run);
  EXPECT_EQ(j.at("schema_version"), kResultsSchemaVersion);
  const RunResult back = results_from_json(j);
  EXPECT_EQ(results_to_json(back), j);

  EXPECT_THROW(results_from_json(nlohmann::json{{"benchmarks", nlohmann::json::array()}}), ResultsFormatError);
  auto newer = j;
  newer["schema_version"] = kResultsSchemaVersion + 1;
  EXPECT_THROW(results_from_json(newer), ResultsFormatError);
  auto broken = j;
  broken["cells"][0].erase("repro");
  EXPECT_THROW(results_from_json(broken), ResultsFormatError);
}

}  // namespace
}  // namespace sharebench
