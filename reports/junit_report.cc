// JUnit XML report: one test suite per cell, one test case per check (over all repetitions) plus
// one for the cell's expectation, so CI systems show failures natively; for a program under exec that
// is a test runner, one more failing case per test of its own a finding happened in, named as the
// runner names it ("tests/test_x.py::test_y"), with that test's findings. A planted bug that was
// caught is a passing case (its evidence in <system-out>); one that was missed is a failure. A
// skipped or interrupted cell is one <skipped/> case with its reason: never a pass.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "reports/report_writers.h"

namespace sharebench {

namespace {
std::string xml(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (c < 0x20 && c != '\n' && c != '\t') out += ' ';
        else out += static_cast<char>(c);
    }
  }
  return out;
}
// The findings of a check's message (its " | "-separated parts) that name `test`.
std::vector<std::string> findings_naming(const std::string& message, const std::string& test) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at <= message.size()) {
    std::size_t next = message.find(" | ", at);
    if (next == std::string::npos) next = message.size();
    const std::string finding = message.substr(at, next - at);
    if (finding.rfind("in test", 0) == 0 && finding.find(test) != std::string::npos) out.push_back(finding);
    at = next + 3;
  }
  return out;
}
}  // namespace

std::string render_junit(const RunResult& run) {
  // The environment goes into every suite's <properties>, where CI systems show it.
  std::string properties = "    <properties>\n";
  for (const auto& [k, v] : run.environment) {
    properties += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", xml(k), xml(v));
  }
  properties += "    </properties>\n";
  std::string suites;
  int total_tests = 0, total_failures = 0, total_skipped = 0;
  for (const auto& c : run.cells) {
    const CellOutcome outcome = c.outcome();
    if (outcome.kind == Outcome::kSkipped || outcome.kind == Outcome::kInterrupted) {
      ++total_tests;
      ++total_skipped;
      suites += fmt::format("  <testsuite name=\"{0}\" tests=\"1\" failures=\"0\" errors=\"0\" skipped=\"1\" time=\"0\">\n{1}"
                            "    <testcase classname=\"{0}\" name=\"cell\" time=\"0\">\n"
                            "      <skipped message=\"{2}\"/>\n    </testcase>\n  </testsuite>\n",
                            xml(c.config.id()), properties, xml(outcome.summary));
      continue;
    }
    // check name → failure messages across repetitions (empty: passed everywhere)
    std::map<std::string, std::vector<std::string>> cases;
    // the program's own test → its findings (exec: Check::tests)
    std::map<std::string, std::vector<std::string>> by_test;
    double time = 0;
    for (const auto& r : c.repetitions) {
      time += r.wall_s;
      for (const auto& ch : r.checks) {
        auto& fails = cases[ch.name];
        if (!check_as_expected(c.expected, ch)) {
          fails.push_back(fmt::format("repetition {}: {} ({})", r.index, ch.message, to_string(ch.verdict)));
          for (const std::string& test : ch.tests) {
            for (const std::string& finding : findings_naming(ch.message, test)) {
              by_test[test].push_back(fmt::format("repetition {}: {}: {}", r.index, ch.name, finding));
            }
          }
        }
      }
      auto& exp = cases["expectation"];
      if (!r.as_expected) {
        std::string text = fmt::format("repetition {}: {}", r.index, r.expectation_message);
        for (const auto& w : r.workers) {
          if (!w.stall.empty()) text += fmt::format("\nrank {} stuck: {}", w.rank, w.stall);
        }
        exp.push_back(text);
      }
    }
    std::string body;
    int failures = 0;
    for (const auto& [name, fails] : cases) {
      const bool must_fail = std::find(c.expected.must_fail.begin(), c.expected.must_fail.end(), name) !=
                             c.expected.must_fail.end();
      body += fmt::format("    <testcase classname=\"{}\" name=\"{}{}\" time=\"{:.3f}\">", xml(c.config.id()), xml(name),
                          must_fail ? " (must catch the planted bug)" : "", time / std::max<std::size_t>(1, cases.size()));
      if (!fails.empty()) {
        ++failures;
        std::string text;
        for (const auto& f : fails) text += f + "\n";
        text += "reproduce: " + c.repro;
        const std::string first_line = fails.front().substr(0, fails.front().find('\n'));
        body += fmt::format("\n      <failure message=\"{}\">{}</failure>\n    ", xml(first_line), xml(text));
      } else if (must_fail) {
        for (const Evidence& e : outcome.evidence) {
          if (e.check == name) body += fmt::format("\n      <system-out>{}</system-out>\n    ", xml(e.message));
        }
      }
      body += "</testcase>\n";
    }
    for (const auto& [test, fails] : by_test) {
      std::string text;
      for (const auto& f : fails) text += f + "\n";
      body += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\">\n      <failure message=\"{}\">{}</failure>\n"
                          "    </testcase>\n",
                          xml(c.config.id()), xml(test), xml(fails.front()), xml(text));
      ++failures;
    }
    total_tests += static_cast<int>(cases.size() + by_test.size());
    total_failures += failures;
    suites += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\" time=\"{:.3f}\">\n{}{}  </testsuite>\n",
                          xml(c.config.id()), cases.size() + by_test.size(), failures, time, properties, body);
  }
  return fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"sharebench {}\" tests=\"{}\" "
                     "failures=\"{}\" skipped=\"{}\">\n{}</testsuites>\n",
                     xml(run.run_id), total_tests, total_failures, total_skipped, suites);
}

}  // namespace sharebench
