// outcome: deciding a cell's one answer from its repetitions.
#include "harness/results/outcome.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/results/results.h"

namespace sharebench {

std::string_view to_string(Outcome o) {
  switch (o) {
    case Outcome::kOk: return "ok";
    case Outcome::kBugCaught: return "bug-caught";
    case Outcome::kFaultHandled: return "fault-handled";
    case Outcome::kSkipped: return "skipped";
    case Outcome::kInterrupted: return "interrupted";
    case Outcome::kUnexpected: return "unexpected";
  }
  return "unexpected";
}

std::optional<Outcome> parse_outcome(std::string_view s) {
  for (Outcome o : {Outcome::kOk, Outcome::kBugCaught, Outcome::kFaultHandled, Outcome::kSkipped,
                    Outcome::kInterrupted, Outcome::kUnexpected}) {
    if (to_string(o) == s) return o;
  }
  return std::nullopt;
}

namespace {
bool listed(const std::vector<std::string>& v, const std::string& name) {
  return std::find(v.begin(), v.end(), name) != v.end();
}

void add_once(std::vector<Evidence>& out, Evidence e) {
  for (const Evidence& have : out) {
    if (have.check == e.check) return;
  }
  out.push_back(std::move(e));
}
}  // namespace

CellOutcome decide_outcome(const CellResult& cell) {
  CellOutcome out;
  const Expectation& e = cell.expected;
  out.repetitions = static_cast<int>(cell.repetitions.size());
  bool any_interrupted = false, all_skipped = !cell.repetitions.empty();
  std::string interrupt_reason;
  for (const Repetition& r : cell.repetitions) {
    all_skipped &= r.status == RunStatus::kSkipped;
    if (r.status == RunStatus::kSkipped && out.reason.empty()) out.reason = r.status_message;
    if (r.status == RunStatus::kInterrupted) {
      any_interrupted = true;
      if (interrupt_reason.empty()) interrupt_reason = r.status_message;
      continue;  // an interrupted repetition neither passes nor fails
    }
    if (r.status == RunStatus::kSkipped || r.as_expected) continue;
    ++out.repetitions_unexpected;
    for (const std::string& name : e.must_fail) {
      auto it = std::find_if(r.checks.begin(), r.checks.end(), [&](const Check& c) { return c.name == name; });
      if (it == r.checks.end()) {
        add_once(out.evidence, {name, "missed", "the check that must catch this planted bug did not run", r.index});
      } else if (it->verdict != Verdict::kFail) {
        add_once(out.evidence, {name, "missed", fmt::format("did not catch the planted bug ({}: {})",
                                                            to_string(it->verdict), it->message), r.index});
      }
    }
    for (const Check& c : r.checks) {
      if (!check_as_expected(e, c) && !listed(e.must_fail, c.name) &&
          !(e.others_free && !listed(e.must_pass, c.name))) {
        add_once(out.evidence, {c.name, to_string(c.verdict), c.message, r.index});
      }
    }
  }

  if (cell.repetitions.empty()) {
    out.kind = Outcome::kInterrupted;
    out.reason = "no repetition ran";
  } else if (out.repetitions_unexpected > 0) {
    out.kind = Outcome::kUnexpected;
  } else if (all_skipped) {
    out.kind = Outcome::kSkipped;
  } else if (any_interrupted) {
    out.kind = Outcome::kInterrupted;
    out.reason = interrupt_reason;
  } else if (e.others_free) {
    out.kind = Outcome::kFaultHandled;
  } else if (!e.must_fail.empty()) {
    out.kind = Outcome::kBugCaught;
  } else if (cell.known_bug && !e.may_fail.empty()) {
    // A planted bug that needs luck (its checks may fail): caught when one of them failed in some
    // repetition, with the rate; otherwise ok, saying it did not show, never a bare "ok".
    std::string rates;
    for (const std::string& name : e.may_fail) {
      int failed = 0, ran = 0;
      const Repetition* first = nullptr;
      for (const Repetition& r : cell.repetitions) {
        auto it = std::find_if(r.checks.begin(), r.checks.end(), [&](const Check& c) { return c.name == name; });
        if (it == r.checks.end()) continue;
        ++ran;
        if (it->verdict == Verdict::kFail && ++failed == 1) first = &r;
      }
      if (!first) continue;
      const auto it = std::find_if(first->checks.begin(), first->checks.end(), [&](const Check& c) { return c.name == name; });
      add_once(out.evidence, {name, "fail", fmt::format("{} (in {} of {} repetitions)", it->message, failed, ran), first->index});
    }
    out.kind = out.evidence.empty() ? Outcome::kOk : Outcome::kBugCaught;
    if (out.evidence.empty()) out.reason = fmt::format("the planted bug did not show ({} may catch it)", fmt::join(e.may_fail, ", "));
  } else {
    out.kind = Outcome::kOk;
  }

  if (out.kind == Outcome::kBugCaught || out.kind == Outcome::kFaultHandled) {
    // The evidence: each must-fail check's message from the first repetition that ran it.
    for (const std::string& name : e.must_fail) {
      for (const Repetition& r : cell.repetitions) {
        auto it = std::find_if(r.checks.begin(), r.checks.end(), [&](const Check& c) { return c.name == name; });
        if (it != r.checks.end() && it->verdict == Verdict::kFail) {
          add_once(out.evidence, {name, "fail", it->message, r.index});
          break;
        }
      }
    }
  }

  if (out.kind == Outcome::kFaultHandled && e.must_fail.empty() && !cell.repetitions.empty()) {
    // Nothing had to fail (a program under `exec` must only end): the evidence is how it ended,
    // the fault itself and whatever the program did about it (an error exit, say).
    const Repetition& r = cell.repetitions.front();
    for (const Check& c : r.checks) {
      if (c.name == "fault-injected" || c.name == "liveness" || c.verdict == Verdict::kFail) {
        add_once(out.evidence, {c.name, std::string(to_string(c.verdict)), c.message, r.index});
      }
    }
  }

  std::vector<std::string> names;
  for (const Evidence& ev : out.evidence) names.push_back(ev.check);
  switch (out.kind) {
    case Outcome::kOk: out.summary = out.reason.empty() ? "ok" : "ok: " + out.reason; break;
    case Outcome::kBugCaught: out.summary = fmt::format("bug caught by {}", fmt::join(names, ", ")); break;
    case Outcome::kFaultHandled:
      out.summary = e.must_fail.empty() ? "fault handled: the program ended after the fault"
                                        : fmt::format("fault handled ({} failed as it must)", fmt::join(names, ", "));
      break;
    case Outcome::kSkipped: out.summary = "skipped: " + out.reason; break;
    case Outcome::kInterrupted: out.summary = "interrupted: " + out.reason; break;
    case Outcome::kUnexpected:
      out.summary = fmt::format("unexpected in {} of {} repetition(s): {}", out.repetitions_unexpected,
                                out.repetitions, fmt::join(names, ", "));
      break;
  }
  return out;
}

}  // namespace sharebench
