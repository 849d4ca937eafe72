// Output tests of every report writer against patterns (as google/benchmark's output tests do),
// on a fixed run with a pass, a caught planted bug and an unexpected hang.
#include <regex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "reports/console_report.h"
#include "reports/report_writers.h"
#include "tests/report_fixture.h"

namespace sharebench {
namespace {

void expect_matches(const std::string& text, const std::vector<std::string>& patterns) {
  for (const auto& p : patterns) {
    EXPECT_TRUE(std::regex_search(text, std::regex(p))) << "pattern not found: " << p << "\n--- in ---\n" << text;
  }
}

TEST(ConsoleReport, TableFailuresAndWarning) {
  const std::string out = render_console(testing::report_fixture(), false);
  expect_matches(out, {R"(CELL\s+RESULT\s+STEPS/S)", R"(locked/whole-step@fork:2\s+ok\s+2500\s+80000\s+0\.880 \(0\.840\)\s+36%\s+20 ms)",
                       R"(locked/local-lock@spawn:2\s+bug caught)", R"(hogwild/lock-free@forkserver:4\s+UNEXPECTED)",
                       R"(rank 1 stuck: running at step 12)", R"(reproduce: build/sharebench run --scenario hogwild/lock-free)",
                       R"(3 cells: 2 as expected \(1 planted bugs caught, 0 skipped\), 1 unexpected)",
                       R"(warning: up to 4 worker threads on 2 cores)",
                       R"(Machine: Test CPU \(2 cores\), LibTorch 1\.13\.0, 1 intra-op thread\(s\) per worker\nBLAS: /usr/lib/libopenblas)"});
  EXPECT_EQ(out.find("\033["), std::string::npos) << "no colour when not asked";
}

TEST(MarkdownReport, FailuresFirstWithReproduce) {
  const std::string md = render_markdown(testing::report_fixture());
  expect_matches(md, {R"(^# sharebench run 20260101-000000-1)", R"(\*\*1 unexpected\*\*)", R"(Warning: up to 4 worker threads)",
                      R"(## Failures\n\n### `hogwild/lock-free@forkserver:4`)", R"(- status \*\*hang\*\*: no progress)",
                      R"(- \*\*unknown\*\* `convergence`)", R"(```sh\nbuild/sharebench run --scenario hogwild/lock-free\n```)",
                      R"(\| `locked/local-lock@spawn:2` \| 🐞 bug caught \| 4500 \|)", R"(\| blas \| /usr/lib/libopenblas\.so\.0 \|)"});
  EXPECT_LT(md.find("## Failures"), md.find("## Cells"));
}

TEST(CsvReport, OneRowPerCellAndRepetition) {
  const std::string csv = render_csv(testing::report_fixture());
  expect_matches(csv, {R"(^run_id,cell,scenario,variant,start,procs,repetition,status,verdict,as_expected,wall_s,steps_per_s)",
                       R"(\n20260101-000000-1,locked/whole-step@fork:2,locked,whole-step,fork,2,0,completed,pass,true,0,2500,80000,0\.88,)",
                       R"(\n20260101-000000-1,hogwild/lock-free@forkserver:4,hogwild,lock-free,forkserver,4,0,hang,fail,false,.*liveness=fail;convergence=unknown,Test CPU,)"});
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);
  expect_matches(csv, {R"(,Test CPU,2,1\.13\.0,/usr/lib/libopenblas\.so\.0,1,build/sharebench run --scenario locked/whole-step\n)"});
}

TEST(JunitReport, CaseperCheckAndFailuresWithMessages) {
  const std::string x = render_junit(testing::report_fixture());
  expect_matches(x, {R"(^<\?xml version="1\.0" encoding="UTF-8"\?>)", R"(<testsuites name="sharebench 20260101-000000-1" tests="9" failures="3">)",
                     R"(<testsuite name="locked/local-lock@spawn:2" tests="3" failures="0")",
                     R"(<testcase classname="locked/local-lock@spawn:2" name="mutual-exclusion \(must catch the planted bug\))",
                     R"(<testcase classname="hogwild/lock-free@forkserver:4" name="liveness"[^>]*>\n\s*<failure message="repetition 0: hang: no progress)",
                     R"(reproduce: build/sharebench run --scenario hogwild/lock-free</failure>)",
                     R"(<properties>\n\s*<property name="blas" value="/usr/lib/libopenblas\.so\.0"/>)"});
}

TEST(GbenchReport, SchemaVersionOneWithRequiredFields) {
  const auto j = nlohmann::json::parse(render_gbench_json(testing::report_fixture()));
  EXPECT_EQ(j.at("context").at("json_schema_version"), 1);
  EXPECT_EQ(j.at("context").at("num_cpus"), 2);
  ASSERT_EQ(j.at("benchmarks").size(), 2u);  // the hung cell has no throughput
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

TEST(HtmlReport, SelfContainedWithChartsFailuresAndTable) {
  const std::string h = render_html(testing::report_fixture());
  expect_matches(h, {R"(^<!doctype html>)", R"(Chart\.js v3)", R"(<canvas id="chart-throughput-locked")",
                     R"(<canvas id="chart-loss-steps-locked")", R"(<canvas id="chart-loss-time-locked")",
                     R"(<canvas id="chart-launch")", R"(<h2>Failures</h2>)", R"(rank 1 stuck:</p><pre>running at step 12)",
                     R"(<td class="caught">bug caught</td>)", R"(<p class="warning">Warning: up to 4 worker threads)"});
  EXPECT_EQ(h.find("<script src="), std::string::npos) << "nothing loaded from outside";
  EXPECT_EQ(h.find("<link"), std::string::npos);
}

}  // namespace
}  // namespace sharebench
