// TAP report (the Test Anything Protocol, version 13): one test point per cell, for the CI
// harnesses and `prove`-style runners that read TAP. A cell as expected is "ok" (a caught planted
// bug too, its evidence in the YAML block); an unexpected one is "not ok" with the checks that went
// against expectation; a skipped or interrupted cell is "ok ... # SKIP reason": never a plain pass.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "reports/report_writers.h"

namespace sharebench {

namespace {
// A test point's description holds no line break and no '#' (which would start a directive).
std::string tap_text(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c == '#') out += "\\#";
    else if (c < 0x20 || c == 0x7f) out += ' ';
    else out += static_cast<char>(c);
  }
  return out;
}

// A YAML scalar that cannot break the block: a JSON string is a YAML double-quoted scalar.
std::string yaml_text(const std::string& s) { return nlohmann::json(s).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace); }
}  // namespace

std::string render_tap(const RunResult& run) {
  std::string out = fmt::format("TAP version 13\n1..{}\n", run.cells.size());
  int n = 0;
  for (const CellResult& c : run.cells) {
    ++n;
    const CellOutcome o = c.outcome();
    const std::string name = tap_text(c.config.id());
    if (o.kind == Outcome::kSkipped || o.kind == Outcome::kInterrupted) {
      out += fmt::format("ok {} - {} # SKIP {}\n", n, name, tap_text(o.summary));
      continue;
    }
    out += fmt::format("{} {} - {}\n", o.kind == Outcome::kUnexpected ? "not ok" : "ok", n, name);
    if (o.kind == Outcome::kOk && o.evidence.empty()) continue;
    out += fmt::format("  ---\n  outcome: {}\n  summary: {}\n", to_string(o.kind), yaml_text(o.summary));
    if (!o.evidence.empty()) {
      out += "  evidence:\n";
      for (const Evidence& e : o.evidence) {
        out += fmt::format("    - check: {}\n      verdict: {}\n      repetition: {}\n      message: {}\n",
                           yaml_text(e.check), yaml_text(e.verdict), e.repetition, yaml_text(e.message));
      }
    }
    out += "  ...\n";
  }
  return out;
}

}  // namespace sharebench
