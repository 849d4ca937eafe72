// outcome: the one answer each cell gives, decided here and nowhere else. Every report (console,
// Markdown, HTML, CSV, JUnit, Google Benchmark JSON), `compare` and the exit code only read it.
//
//   ok             a correct variant; every check passed in every repetition
//   bug-caught     a planted bug, caught by the check(s) that must catch it: `evidence` holds each
//                  catching check's message (the cycle, the counts, the step)
//   fault-handled  an injected fault ended the cell as it must, and the harness's checks passed
//   skipped        the cell cannot run here (no GPU, …): `reason` says why; never green
//   interrupted    SIGINT/SIGTERM stopped it before it finished; neither passed nor failed
//   unexpected     some repetition went against its expectation: `evidence` holds the failing
//                  checks (and the planted bug's checks that did not catch it)
//
// An unexpected repetition outweighs an interruption of a later one: what failed, failed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sharebench {

struct CellResult;

enum class Outcome { kOk, kBugCaught, kFaultHandled, kSkipped, kInterrupted, kUnexpected };
std::string_view to_string(Outcome o);     // as files write it: "bug-caught"
std::string_view outcome_label(Outcome o);  // as people read it: "bug caught", "UNEXPECTED"
std::optional<Outcome> parse_outcome(std::string_view s);

struct Evidence {
  std::string check;    // the check's name
  std::string verdict;  // pass | fail | unknown | missed (a must-fail check that never ran)
  std::string message;  // the check's own message
  int repetition = 0;   // the first repetition it comes from
};

struct CellOutcome {
  Outcome kind = Outcome::kOk;
  std::string summary;              // one line: "bug caught by mutual-exclusion", "skipped: no GPU"
  std::vector<Evidence> evidence;   // see above
  std::string reason;               // skipped / interrupted: why
  int repetitions = 0;
  int repetitions_unexpected = 0;
  // As expected: ok, bug caught or fault handled. Skipped and interrupted are not green, and not red.
  bool green() const { return kind == Outcome::kOk || kind == Outcome::kBugCaught || kind == Outcome::kFaultHandled; }
  bool red() const { return kind == Outcome::kUnexpected; }
};

// Pure: the cell's outcome from its expectation and repetitions.
CellOutcome decide_outcome(const CellResult& cell);

}  // namespace sharebench
