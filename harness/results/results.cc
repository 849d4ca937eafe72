// Results model: verdict arithmetic and the expectation judge (pure functions).
#include "harness/results/results.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/util/enum_words.h"

namespace sharebench {

namespace {
constexpr EnumWord<Verdict> kVerdictWords[] = {
    {Verdict::kPass, "pass"}, {Verdict::kFail, "fail"}, {Verdict::kUnknown, "unknown"},
    {Verdict::kNotExercised, "not-exercised"}};
constexpr EnumWord<RunStatus> kRunStatusWords[] = {
    {RunStatus::kCompleted, "completed"},   {RunStatus::kHang, "hang"},
    {RunStatus::kDeadline, "deadline"},     {RunStatus::kWorkerFailed, "worker-failed"},
    {RunStatus::kInterrupted, "interrupted"}, {RunStatus::kSkipped, "skipped"},
    {RunStatus::kError, "error"},           {RunStatus::kSetupTimeout, "setup-timeout"}};
}  // namespace

std::string to_string(Verdict v) { return std::string(word_of(kVerdictWords, v)); }
std::optional<Verdict> parse_verdict(const std::string& s) { return value_of_word(kVerdictWords, s); }
std::string to_string(RunStatus s) { return std::string(word_of(kRunStatusWords, s)); }
std::optional<RunStatus> parse_run_status(const std::string& s) { return value_of_word(kRunStatusWords, s); }

std::vector<std::string> distinct_notes(const CellResult& cell) {
  std::vector<std::string> notes;
  for (const Repetition& r : cell.repetitions) {
    for (const std::string& n : r.notes) {
      if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
    }
  }
  return notes;
}

std::vector<std::pair<std::string, std::vector<std::string>>> unexercised_checks(const RunResult& run) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (const CellResult& cell : run.cells) {
    for (const Repetition& r : cell.repetitions) {
      for (const Check& c : r.checks) {
        if (c.verdict != Verdict::kNotExercised) continue;
        auto it = std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == c.name; });
        if (it == out.end()) it = out.insert(out.end(), {c.name, {}});
        if (std::find(it->second.begin(), it->second.end(), cell.config.id()) == it->second.end()) {
          it->second.push_back(cell.config.id());
        }
      }
    }
  }
  return out;
}

std::string unexercised_summary(const RunResult& run) {
  std::vector<std::string> parts;
  for (const auto& [name, cells] : unexercised_checks(run)) {
    std::vector<std::string> shown(cells.begin(), cells.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(3, cells.size())));
    if (cells.size() > shown.size()) shown.push_back("…");
    parts.push_back(fmt::format("{} in {} cell{} ({})", name, cells.size(), cells.size() == 1 ? "" : "s",
                                fmt::join(shown, ", ")));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

Verdict overall_verdict(const std::vector<Check>& checks) {
  bool unknown = false;
  for (const Check& c : checks) {
    if (c.verdict == Verdict::kFail) return Verdict::kFail;
    unknown |= c.verdict == Verdict::kUnknown;
  }
  return unknown ? Verdict::kUnknown : Verdict::kPass;
}

bool check_as_expected(const Expectation& e, const Check& c) {
  auto listed = [](const std::vector<std::string>& v, const std::string& name) {
    return std::find(v.begin(), v.end(), name) != v.end();
  };
  if (listed(e.must_fail, c.name)) return c.verdict == Verdict::kFail;
  return c.verdict == Verdict::kPass || c.verdict == Verdict::kNotExercised || listed(e.may_fail, c.name);
}

void give_every_check_an_exposure(Repetition& rep) {
  std::int64_t steps = 0;
  for (const WorkerRecord& w : rep.workers) steps += w.steps;
  const Exposure watched = steps > 0 ? Exposure{static_cast<double>(steps), "worker steps it watched"}
                                     : Exposure{rep.wall_s * 1e3, "ms of the repetition it watched"};
  for (Check& c : rep.checks) {
    if (!c.exposure) c.exposure = watched;
  }
}

void mark_unexercised_checks(std::vector<Check>& checks) {
  for (Check& c : checks) {
    if (c.verdict == Verdict::kPass && c.exposure && c.exposure->count <= 0) c.verdict = Verdict::kNotExercised;
  }
}

std::string exposure_text(const Exposure& e, const std::string& to_raise) {
  if (e.count <= 0) return fmt::format("not exercised: no {} ({} to put it to the test)", e.what, to_raise);
  std::string digits = fmt::format("{:.0f}", e.count);
  for (int at = static_cast<int>(digits.size()) - 3; at > 0; at -= 3) digits.insert(static_cast<std::size_t>(at), " ");
  return fmt::format("exercised: {} {}", digits, e.what);
}

void judge_against(const Expectation& e, Repetition& rep) {
  if (rep.status == RunStatus::kSkipped) {
    rep.as_expected = true;
    rep.expectation_message = "skipped: " + rep.status_message;
    return;
  }
  if (rep.status == RunStatus::kInterrupted) {
    // Neither passed nor failed: the cell's outcome says interrupted (outcome.h).
    rep.as_expected = false;
    rep.expectation_message = "interrupted: " + rep.status_message;
    return;
  }
  auto listed = [](const std::vector<std::string>& v, const std::string& name) {
    return std::find(v.begin(), v.end(), name) != v.end();
  };
  std::vector<std::string> missed;      // must fail, but did not
  std::vector<std::string> unexercised; // must fail, but its situation never arose: neither caught nor missed
  std::vector<std::string> vacuous;     // any other check that held only because nothing tested it
  std::vector<std::string> unexpected;  // must not fail, but did (or could not be decided)
  for (const std::string& name : e.must_fail) {
    auto it = std::find_if(rep.checks.begin(), rep.checks.end(),
                           [&](const Check& c) { return c.name == name; });
    if (it != rep.checks.end() && it->verdict == Verdict::kNotExercised) unexercised.push_back(name);
    else if (it == rep.checks.end() || it->verdict != Verdict::kFail) missed.push_back(name);
  }
  for (const Check& c : rep.checks) {
    if (c.verdict == Verdict::kNotExercised && !listed(e.must_fail, c.name)) vacuous.push_back(c.name);
    if (c.verdict == Verdict::kPass || c.verdict == Verdict::kNotExercised || listed(e.must_fail, c.name) ||
        listed(e.may_fail, c.name)) {
      continue;
    }
    if (e.others_free && !listed(e.must_pass, c.name)) continue;
    unexpected.push_back(fmt::format("{} ({})", c.name, to_string(c.verdict)));
  }
  rep.as_expected = missed.empty() && unexercised.empty() && unexpected.empty();
  if (rep.as_expected) {
    rep.expectation_message =
        e.clean()         ? std::string("clean, as expected")
        : e.others_free   ? fmt::format("fault handled: {} failed as it must; the harness's checks passed",
                                        fmt::join(e.must_fail, ", "))
                          : fmt::format("caught: {}", fmt::join(e.must_fail, ", "));
    if (!vacuous.empty()) rep.expectation_message += fmt::format(" (not exercised: {})", fmt::join(vacuous, ", "));
  } else if (!unexercised.empty() && missed.empty()) {
    rep.expectation_message = fmt::format("planted bug not exercised: {} never met the situation it guards against "
                                          "(neither caught nor missed)",
                                          fmt::join(unexercised, ", "));
    if (!unexpected.empty()) rep.expectation_message += fmt::format("; also {}", fmt::join(unexpected, ", "));
  } else if (!missed.empty()) {
    rep.expectation_message = fmt::format("planted bug NOT caught by: {}", fmt::join(missed, ", "));
    if (!unexpected.empty()) rep.expectation_message += fmt::format("; also {}", fmt::join(unexpected, ", "));
  } else {
    rep.expectation_message = fmt::format("unexpected: {}", fmt::join(unexpected, ", "));
  }
}

namespace {
constexpr EnumWord<ScenarioKind> kScenarioKindWords[] = {
    {ScenarioKind::kTraining, "training"}, {ScenarioKind::kInference, "inference"},
    {ScenarioKind::kMessages, "messages"}, {ScenarioKind::kLockOnly, "lock-only"},
    {ScenarioKind::kProgram, "program"}};
}  // namespace

std::string_view to_string(ScenarioKind k) { return word_of(kScenarioKindWords, k); }
std::optional<ScenarioKind> parse_scenario_kind(std::string_view s) { return value_of_word(kScenarioKindWords, s); }

bool keeps_program_output_private(const RunResult& run) {
  return !run.readable_results &&
         std::any_of(run.cells.begin(), run.cells.end(), [](const CellResult& c) { return !c.config.command.empty(); });
}

}  // namespace sharebench
