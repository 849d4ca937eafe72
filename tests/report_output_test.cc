// Output tests of every report writer against patterns (as google/benchmark's output tests do), on
// a fixed run holding one cell of every outcome (tests/report_fixture.h). The first test is the
// contract: each cell's outcome shows as itself in every format, and a skipped or interrupted cell
// is never shown as passed anywhere.
#include <algorithm>
#include <map>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/results/results_json.h"
#include "reports/console_report.h"
#include "reports/report_writers.h"
#include "tests/report_fixture.h"

namespace sharebench {
namespace {

void expect_matches(const std::string& text, const std::vector<std::string>& patterns) {
  for (const auto& p : patterns) {
    EXPECT_TRUE(std::regex_search(text, std::regex(p)))
        << "pattern not found: " << p << "\n--- in ---\n" << (text.size() > 6000 ? text.substr(0, 6000) + "…" : text);
  }
}

// Lines of `text` that mention `id` (escaped for a regex by the caller's choice of plain find).
std::vector<std::string> lines_with(const std::string& text, const std::string& id) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find(id) != std::string::npos) out.push_back(line);
  }
  return out;
}

TEST(EveryOutcome, DecidedOnceAndShownAsItselfInEveryWriter) {
  const RunResult run = testing::report_fixture();
  const std::map<std::string, Outcome> want{
      {"locked/whole-step@fork:2", Outcome::kOk},           {"locked/local-lock@spawn:2", Outcome::kBugCaught},
      {"locked/whole-step@fork:2~kill:1@20", Outcome::kFaultHandled}, {"ipc/cuda@spawn:2", Outcome::kSkipped},
      {"hogwild/lock-free@fork:1", Outcome::kInterrupted},  {"hogwild/lock-free@forkserver:4", Outcome::kUnexpected}};
  ASSERT_EQ(run.cells.size(), want.size());
  for (const CellResult& c : run.cells) EXPECT_EQ(c.outcome().kind, want.at(c.config.id())) << c.config.id();

  // The results file carries the outcome, and reading it back decides the same.
  const nlohmann::json j = results_to_json(run);
  const RunResult back = results_from_json(j);
  for (std::size_t i = 0; i < run.cells.size(); ++i) {
    EXPECT_EQ(j.at("cells").at(i).at("outcome").at("kind"), std::string(to_string(run.cells[i].outcome().kind)));
    EXPECT_EQ(back.cells[i].outcome().kind, run.cells[i].outcome().kind);
  }
  EXPECT_EQ(j.at("summary").at("skipped"), 1);
  EXPECT_EQ(j.at("summary").at("interrupted"), 1);
  EXPECT_EQ(j.at("summary").at("unexpected"), 1);

  // Console: each cell's row carries its outcome word.
  const std::string console = render_console(run, RenderOptions{});
  expect_matches(console, {R"(locked/whole-step@fork:2 +ok )", R"(locked/local-lock@spawn:2 +bug caught )",
                           R"(locked/whole-step@fork:2~kill:1@20 +fault handled )", R"(ipc/cuda@spawn:2 +skipped )",
                           R"(hogwild/lock-free@fork:1 +interrupted )", R"(hogwild/lock-free@forkserver:4 +UNEXPECTED )"});
  // Markdown: a badge per row.
  const std::string md = render_markdown(run);
  expect_matches(md, {R"(\| `locked/whole-step@fork:2` \| ✅ ok \|)", R"(\| `locked/local-lock@spawn:2` \| 🐞 bug caught \|)",
                      R"(\| `locked/whole-step@fork:2~kill:1@20` \| 💥 fault handled \|)",
                      R"(\| `ipc/cuda@spawn:2` \| ⏭️ skipped: no CUDA device \|)",
                      R"(\| `hogwild/lock-free@fork:1` \| ⏹️ interrupted: interrupted by signal 2 \|)",
                      R"(\| `hogwild/lock-free@forkserver:4` \| ❌ unexpected \|)"});
  // HTML: a class and a word per row.
  const std::string html = render_html(run);
  expect_matches(html, {R"(<td>locked/whole-step@fork:2</td><td class="ok">ok</td>)",
                        R"(<td>locked/local-lock@spawn:2</td><td class="caught">bug caught</td>)",
                        R"(<td>locked/whole-step@fork:2~kill:1@20</td><td class="caught">fault handled</td>)",
                        R"(<td>ipc/cuda@spawn:2</td><td class="skip">skipped: no CUDA device</td>)",
                        R"(<td>hogwild/lock-free@fork:1</td><td class="skip">interrupted: interrupted by signal 2</td>)",
                        R"(<td>hogwild/lock-free@forkserver:4</td><td class="bad">UNEXPECTED</td>)"});
  // CSV: the outcome column.
  const std::string csv = render_csv(run);
  expect_matches(csv, {R"(\n20260101-000000-1,locked/whole-step@fork:2,ok,)", R"(\n20260101-000000-1,locked/local-lock@spawn:2,bug-caught,)",
                       R"(,locked/whole-step@fork:2~kill:1@20,fault-handled,)", R"(,ipc/cuda@spawn:2,skipped,)",
                       R"(,hogwild/lock-free@fork:1,interrupted,)", R"(,hogwild/lock-free@forkserver:4,unexpected,)"});
  // JUnit: skipped and interrupted cells are <skipped/>, the unexpected one fails, the others pass.
  const std::string junit = render_junit(run);
  expect_matches(junit, {R"(<testsuite name="ipc/cuda@spawn:2" tests="1" failures="0" errors="0" skipped="1")",
                         R"(<skipped message="skipped: no CUDA device"/>)",
                         R"(<testsuite name="hogwild/lock-free@fork:1" tests="1" failures="0" errors="0" skipped="1")",
                         R"(<skipped message="interrupted: interrupted by signal 2"/>)",
                         R"(<testsuite name="locked/local-lock@spawn:2" tests="3" failures="0")",
                         R"(<testsuite name="hogwild/lock-free@forkserver:4" tests="3" failures="[1-9])",
                         R"(<testsuites name="sharebench 20260101-000000-1" tests="\d+" failures="\d+" skipped="2">)"});
  // Google Benchmark JSON: the skipped and interrupted cells are not benchmarks (compare.py reads
  // real_time from every benchmark) but listed in the context with their outcome; the unexpected
  // one carries error_occurred; nothing else does.
  const auto g = nlohmann::json::parse(render_gbench_json(run));
  std::map<std::string, nlohmann::json> by_name, not_run;
  for (const auto& b : g.at("benchmarks")) by_name[b.at("name").get<std::string>()] = b;
  for (const auto& b : g.at("context").at("sharebench_not_run")) not_run[b.at("name").get<std::string>()] = b;
  for (const char* id : {"ipc/cuda@spawn:2", "hogwild/lock-free@fork:1"}) {
    EXPECT_FALSE(by_name.count(id)) << id << ": a cell that did not run is no benchmark";
    ASSERT_TRUE(not_run.count(id)) << id;
  }
  EXPECT_EQ(not_run["ipc/cuda@spawn:2"].at("sharebench_outcome"), "skipped");
  EXPECT_EQ(not_run["hogwild/lock-free@fork:1"].at("sharebench_outcome"), "interrupted");
  EXPECT_FALSE(by_name["locked/whole-step@fork:2"].value("error_occurred", false));
  EXPECT_EQ(by_name["locked/local-lock@spawn:2"].at("sharebench_outcome"), "bug-caught");

  // Never green: no row of the skipped or interrupted cell, in any format, reads as passed.
  for (const char* id : {"ipc/cuda@spawn:2", "hogwild/lock-free@fork:1"}) {
    for (const std::string* text : {&console, &md, &html, &csv}) {
      for (const std::string& line : lines_with(*text, id)) {
        EXPECT_EQ(line.find(" ok "), std::string::npos) << line;
        EXPECT_EQ(line.find("✅"), std::string::npos) << line;
        EXPECT_EQ(line.find("class=\"ok\""), std::string::npos) << line;
        EXPECT_EQ(line.find(",ok,"), std::string::npos) << line;
      }
    }
  }
}

// A planted bug that needs luck (may-fail checks only, as luck-counter/unlocked without --chaos):
// caught, with its rate, when it showed in some repetition; "ok" saying it did not show otherwise,
// never a bare "ok" that reads as if the bug had been looked for and was absent.
TEST(MayFailBug, CaughtWithItsRateOrOkSayingItDidNotShow) {
  CellResult cell;
  cell.config.scenario = "luck-counter";
  cell.config.variant = "unlocked";
  cell.known_bug = true;
  cell.expected = Expectation{{}, {"lost-updates"}};
  for (int i = 0; i < 3; ++i) {
    Repetition r;
    r.index = i;
    r.as_expected = true;
    r.checks.push_back({"lost-updates", i < 2 ? Verdict::kFail : Verdict::kPass, 0.0,
                        i < 2 ? "the counter ended at 590 of 600: 10 update(s) lost" : "all updates reached"});
    cell.repetitions.push_back(r);
  }
  CellOutcome caught = cell.outcome();
  EXPECT_EQ(caught.kind, Outcome::kBugCaught);
  ASSERT_EQ(caught.evidence.size(), 1u);
  EXPECT_EQ(caught.evidence[0].check, "lost-updates");
  EXPECT_NE(caught.evidence[0].message.find("(in 2 of 3 repetitions)"), std::string::npos) << caught.evidence[0].message;

  for (Repetition& r : cell.repetitions) r.checks[0].verdict = Verdict::kPass;
  CellOutcome missed = cell.outcome();
  EXPECT_EQ(missed.kind, Outcome::kOk);
  EXPECT_EQ(missed.summary, "ok: the planted bug did not show (lost-updates may catch it)");
}

TEST(ConsoleReport, TablesPerKindEvidenceFailuresAndWarning) {
  const std::string out = render_console(testing::report_fixture(), RenderOptions{});
  expect_matches(out, {R"(training\nCELL\s+RESULT\s+STEPS/S\s+SAMPLES/S\s+LOSS \(SERIAL\)\s+LOCKWAIT\s+LOST\s+SYNC\s+USS/WORKER\s+LAUNCH)",
                       R"(locked/whole-step@fork:2\s+ok\s+2400\s+80000\s+0\.880 \(0\.840\)\s+36%\s+-\s+-\s+-\s+20 ms)",
                       R"(messages\nCELL\s+RESULT\s+MSGS/S\s+GB/S\s+USS/WORKER\s+LAUNCH)",
                       R"(locked/local-lock@spawn:2\s+bug caught\s+~4500)", R"(~ timed region under 0\.2 s)",
                       R"(bug caught locked/local-lock@spawn:2 by mutual-exclusion: 1900 of 2000 guarded sections overlapped)",
                       R"(UNEXPECTED hogwild/lock-free@forkserver:4: unexpected in 1 of 1 repetition\(s\): liveness, convergence)",
                       R"(rank 1 stuck: running at step 12)", R"(rank 1 stacks:\n\s+#0 futex_wait)",
                       R"(reproduce: build/sharebench run --scenario hogwild/lock-free)",
                       R"(skipped ipc/cuda@spawn:2: no CUDA device)",
                       R"(6 cells: 3 as expected \(1 ok, 1 planted bug caught, 1 fault handled\), 1 skipped, 1 interrupted, 1 unexpected)",
                       R"(warning: up to 4 worker threads ran on 2 cores)",
                       R"(Machine: Test CPU \(2 cores\), LibTorch 1\.13\.0, 1 intra-op thread\(s\) per worker\nBLAS: /usr/lib/libopenblas)"});
  EXPECT_EQ(out.find("\033["), std::string::npos) << "no colour when not asked";
  EXPECT_NE(render_console(testing::report_fixture(), RenderOptions{true}).find("\033["), std::string::npos);
}

TEST(MarkdownReport, FailuresFirstWithEvidenceAndReproduce) {
  const std::string md = render_markdown(testing::report_fixture());
  expect_matches(md, {R"(^# sharebench run 20260101-000000-1)", R"(\*\*1 unexpected\*\*)", R"(Warning: up to 4 worker threads)",
                      R"(## Failures\n\n### `hogwild/lock-free@forkserver:4`)", R"(- repetition 0 status \*\*hang\*\*: no progress)",
                      R"(- \*\*unknown\*\* `convergence`)", R"(```sh\nbuild/sharebench run --scenario hogwild/lock-free\n```)",
                      R"(## Evidence\n\n\| cell \| caught by \| evidence \|)",
                      R"(\| `locked/local-lock@spawn:2` \| `mutual-exclusion` \| 1900 of 2000 guarded sections overlapped \|)",
                      R"(\| `locked/local-lock@spawn:2` \| 🐞 bug caught \| 4500 \|)", R"(\| blas \| /usr/lib/libopenblas\.so\.0 \|)"});
  EXPECT_LT(md.find("## Failures"), md.find("## Cells"));
}

// Markdown escapes only what opens markup: the load line's arrow reads as an arrow in the raw file,
// a program's tag never reaches the page as HTML.
TEST(MarkdownReport, EscapesWhatOpensMarkupAndNothingElse) {
  RunResult run = testing::report_fixture();
  run.environment["load_before"] = "2.90";
  run.environment["load_after"] = "1.79";
  run.environment["usable_cores"] = "2";
  run.cells.front().repetitions.front().notes.push_back("a program said <script>alert(1)</script> & left");
  const std::string md = render_markdown(run);
  EXPECT_NE(md.find("load 2.90 -> 1.79"), std::string::npos);
  EXPECT_EQ(md.find("&gt;"), std::string::npos);
  EXPECT_EQ(md.find("<script>"), std::string::npos);
}

TEST(CsvReport, OneRowPerCellAndRepetition) {
  const std::string csv = render_csv(testing::report_fixture());
  expect_matches(csv, {R"(^run_id,cell,outcome,scenario,variant,start,procs,repetition,status,verdict,as_expected,wall_s,steps_per_s)",
                       R"(\n20260101-000000-1,locked/whole-step@fork:2,ok,locked,whole-step,fork,2,0,completed,pass,true,0,2500,80000,0\.88,)",
                       R"(\n20260101-000000-1,hogwild/lock-free@forkserver:4,unexpected,hogwild,lock-free,forkserver,4,0,hang,fail,false,.*liveness=fail;convergence=unknown,Test CPU,)"});
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 8);  // header + 7 repetitions
  expect_matches(csv, {R"(,Test CPU,2,1\.13\.0,/usr/lib/libopenblas\.so\.0,1,build/sharebench run --scenario locked/whole-step\n)"});
}

TEST(JunitReport, CasePerCheckFailuresWithMessagesAndEvidence) {
  const std::string x = render_junit(testing::report_fixture());
  expect_matches(x, {R"(^<\?xml version="1\.0" encoding="UTF-8"\?>)",
                     R"(<testcase classname="locked/local-lock@spawn:2" name="mutual-exclusion \(must catch the planted bug\)[^>]*>\n\s*<system-out>1900 of 2000)",
                     R"(<testcase classname="hogwild/lock-free@forkserver:4" name="liveness"[^>]*>\n\s*<failure message="repetition 0: hang: no progress)",
                     R"(reproduce: build/sharebench run --scenario hogwild/lock-free</failure>)",
                     R"(<properties>\n\s*<property name="blas" value="/usr/lib/libopenblas\.so\.0"/>)"});
}

TEST(GbenchReport, SchemaVersionOneWithRequiredFields) {
  const auto j = nlohmann::json::parse(render_gbench_json(testing::report_fixture()));
  EXPECT_EQ(j.at("context").at("json_schema_version"), 1);
  EXPECT_EQ(j.at("context").at("num_cpus"), 2);
  const auto& b = j.at("benchmarks").at(0);
  for (const char* k : {"name", "run_name", "run_type", "repetitions", "repetition_index", "iterations", "real_time",
                        "cpu_time", "time_unit"}) {
    EXPECT_TRUE(b.contains(k)) << k;
  }
  EXPECT_EQ(b.at("name"), "locked/whole-step@fork:2");
  EXPECT_EQ(b.at("run_type"), "iteration");
  EXPECT_EQ(b.at("time_unit"), "us");
  EXPECT_DOUBLE_EQ(b.at("real_time").get<double>(), 400.0);  // 1e6 / 2500 steps/s
  EXPECT_EQ(b.at("iterations"), 2000);
  EXPECT_DOUBLE_EQ(b.at("samples_per_s").get<double>(), 80000);
}

TEST(HtmlReport, SelfContainedWithChartsEvidenceFailuresAndTable) {
  const std::string h = render_html(testing::report_fixture());
  expect_matches(h, {R"(^<!doctype html>)", R"(Chart\.js v3)", R"(<canvas id="chart-throughput-locked")",
                     R"(<canvas id="chart-lockwait-locked")",
                     R"(<canvas id="chart-convergence-locked")", R"(<select id="pick-loss-steps-locked">)",
                     R"(<canvas id="chart-loss-time-locked")", R"(<canvas id="chart-launch")", R"(<h2>Failures</h2>)",
                     R"(rank 1 stuck:</p><pre>running at step 12)", R"(<details><summary>rank 1 stacks</summary>)",
                     R"(<table id="evidence">)", R"(<td class="caught">mutual-exclusion</td><td>1900 of 2000 guarded)",
                     R"(<p class="warning">Warning: up to 4 worker threads)", R"(<td class="n">2400 steps/s</td><td class="n">2300–2500</td>)"});
  // One colour per start method: every dataset of fork is the same blue, in every chart.
  expect_matches(h, {R"("color":"#0969da","dash":\[\],"label":"whole-step@fork")", R"("color":"#cf222e","dash":\[8,4\],"label":"local-lock@spawn")"});
  EXPECT_EQ(h.find("<script src="), std::string::npos) << "nothing loaded from outside";
  EXPECT_EQ(h.find("<link"), std::string::npos);
}

// The cells table says each check's worst verdict over the repetitions, never repetition 0's alone.
TEST(HtmlReport, CellsTableShowsTheWorstVerdictOfEveryRepetition) {
  RunResult run = testing::report_fixture();
  CellResult& cell = run.cells.front();
  ASSERT_FALSE(cell.repetitions.empty());
  for (Repetition& r : cell.repetitions) {
    for (Check& c : r.checks) c.verdict = Verdict::kPass;
  }
  Repetition later = cell.repetitions.front();
  ASSERT_FALSE(later.checks.empty());
  later.checks.front().verdict = Verdict::kFail;  // only the last repetition fails it
  const std::string name = later.checks.front().name;
  cell.repetitions.push_back(later);
  const std::string h = render_html(run);
  const std::string said = fmt::format("{}: fail (in 1 of {} repetitions)", name, cell.repetitions.size());
  EXPECT_NE(h.find(said), std::string::npos) << said;
}

// A --model sweep: each model's cells are charted apart (a line never mixes models) and against
// the model's size; scenarios without a model are charted once.
TEST(HtmlReport, ModelSweepChartsEachModelApartAndAgainstSize) {
  RunResult run = testing::report_fixture();
  run.cells.clear();
  const struct {
    const char* model;
    double bytes, launch_s, steps_per_s;
  } models[] = {{"convnet-s", 270568, 0.1, 900}, {"convnet-m", 4283176, 0.2, 300}, {"transformer-m", 27156520, 0.4, 40}};
  for (const auto& m : models) {
    for (StartMethod start : {StartMethod::kFork, StartMethod::kSpawn}) {
      CellResult c;
      c.config.scenario = "hogwild";
      c.config.variant = "lock-free";
      c.config.start = start;
      c.config.procs = 2;
      c.config.workload.model = m.model;
      c.kind = ScenarioKind::kTraining;
      Repetition r;
      r.checks = {{"liveness", Verdict::kPass, 0.0, "ok"}};
      r.metrics = {{"steps_per_s", m.steps_per_s}, {"launch_s_max", m.launch_s}, {"model_bytes", m.bytes},
                   {"worker_uss_mb_peak", 10 + m.bytes / (1 << 20)}};
      r.verdict = overall_verdict(r.checks);
      judge_against(c.expected, r);
      c.repetitions.push_back(r);
      run.cells.push_back(c);
    }
  }
  const std::string h = render_html(run);
  expect_matches(h, {R"(<canvas id="chart-throughput-hogwild-on-convnet-s")", R"(<canvas id="chart-throughput-hogwild-on-transformer-m")",
                     R"(<canvas id="chart-size-launch-hogwild")", R"(<canvas id="chart-size-throughput-hogwild")",
                     R"(<canvas id="chart-size-memory-hogwild")", R"(throughput against model size \(2 processes\))"});
  EXPECT_EQ(h.find("chart-size-round-hogwild"), std::string::npos) << "no averaging round in these cells";
  // The throughput line against size holds the three models in order of size: 900, 300, 40.
  expect_matches(h, {R"re("label":"lock-free@fork","points":\[\{"hi":900\.0,"lo":900\.0,"x":0\.25[0-9]*,"y":900\.0\},\{"hi":300\.0,"lo":300\.0,"x":4\.08[0-9]*,"y":300\.0\},\{"hi":40\.0)re"});
}

}  // namespace
}  // namespace sharebench
