// test_attribution: which test of the program's test runner each finding of exec's checks happened
// in. A program run under exec is often a test runner (`exec -- python3 -m pytest tests/`), and a
// finding that names a process but not its test says that a race happened somewhere in 300 tests.
// Each Python process's hooks say, at its start, the test that was running (pytest's
// PYTEST_CURRENT_TEST, unittest's test id; python/sharebench_watch.py); a child started during a
// test carries that test. A finding names the processes it is about ("pid 12", "pids 12, 13"), so
// its tests are theirs: the finding is prefixed "in test T: " and the check lists every test its
// findings happened in (Check::tests), for the console, results.json and a JUnit testcase per test.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/results/results.h"

namespace sharebench {

// pid -> the test its start event named (processes outside any test are absent).
std::map<int, std::string> tests_by_pid(const std::vector<nlohmann::json>& events);

// The pids a finding names, in the order it names them ("pid 12 at ...", "in pids 12, 13 and 14").
std::vector<int> pids_named(const std::string& finding);

// Each failing check's findings (its message's " | "-separated parts) prefixed with the tests of the
// processes they name, and its `tests` filled; checks whose findings name no process in a test are
// left as they are.
void attribute_findings_to_tests(const std::map<int, std::string>& tests, std::vector<Check>& checks);

}  // namespace sharebench
