// test_attribution: findings of exec's checks named with the tests they happened in.
#include "wings/exec/test_attribution.h"

#include <algorithm>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace sharebench {

namespace {
constexpr std::string_view kSeparator = " | ";  // how add_verdict joins a check's findings (checks/exec_checks.cc)

std::vector<std::string> split_findings(const std::string& message) {
  std::vector<std::string> out;
  std::size_t at = 0;
  for (std::size_t next; (next = message.find(kSeparator, at)) != std::string::npos; at = next + kSeparator.size()) {
    out.push_back(message.substr(at, next - at));
  }
  out.push_back(message.substr(at));
  return out;
}
}  // namespace

std::map<int, std::string> tests_by_pid(const std::vector<nlohmann::json>& events) {
  std::map<int, std::string> out;
  for (const nlohmann::json& e : events) {
    if (!e.is_object() || e.value("event", "") != "start" || !e.contains("test") || !e["test"].is_string()) continue;
    if (!e.contains("pid") || !e["pid"].is_number_integer()) continue;
    const std::string test = e["test"].get<std::string>();
    if (!test.empty()) out[e["pid"].get<int>()] = test;
  }
  return out;
}

std::vector<int> pids_named(const std::string& finding) {
  static const std::regex named(R"(\bpids? ([0-9]+(?:(?:, | and )[0-9]+)*))");
  static const std::regex number("[0-9]+");
  std::vector<int> out;
  for (std::sregex_iterator m(finding.begin(), finding.end(), named), end; m != end; ++m) {
    const std::string list = (*m)[1].str();
    for (std::sregex_iterator n(list.begin(), list.end(), number); n != end; ++n) {
      try {
        const int pid = std::stoi(n->str());
        if (std::find(out.begin(), out.end(), pid) == out.end()) out.push_back(pid);
      } catch (const std::exception&) {  // a number past int: not a pid
      }
    }
  }
  return out;
}

void attribute_findings_to_tests(const std::map<int, std::string>& tests, std::vector<Check>& checks) {
  if (tests.empty()) return;
  for (Check& check : checks) {
    if (check.verdict != Verdict::kFail || check.message.empty()) continue;
    std::vector<std::string> findings = split_findings(check.message);
    for (std::string& finding : findings) {
      std::vector<std::string> mine;
      for (int pid : pids_named(finding)) {
        const auto it = tests.find(pid);
        if (it != tests.end() && std::find(mine.begin(), mine.end(), it->second) == mine.end()) mine.push_back(it->second);
      }
      if (mine.empty()) continue;
      finding = fmt::format("in test{} {}: {}", mine.size() == 1 ? "" : "s", fmt::join(mine, ", "), finding);
      for (const std::string& t : mine) {
        if (std::find(check.tests.begin(), check.tests.end(), t) == check.tests.end()) check.tests.push_back(t);
      }
    }
    check.message = fmt::format("{}", fmt::join(findings, kSeparator));
  }
}

}  // namespace sharebench
