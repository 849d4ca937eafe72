// outcome: deciding a cell's one answer from its repetitions.
#include "harness/results/outcome.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/results/results.h"

namespace sharebench {

namespace {
// Each outcome's one row: the word files write (results.json, CSV, TAP, JUnit: one token, no
// space) and the label people read (console, Markdown, HTML, compare's sentences).
struct OutcomeWords {
  Outcome value;
  std::string_view word;
  std::string_view label;
};
constexpr OutcomeWords kOutcomes[] = {
    {Outcome::kOk, "ok", "ok"},
    {Outcome::kBugCaught, "bug-caught", "bug caught"},
    {Outcome::kFaultHandled, "fault-handled", "fault handled"},
    {Outcome::kSkipped, "skipped", "skipped"},
    {Outcome::kInterrupted, "interrupted", "interrupted"},
    {Outcome::kUnexpected, "unexpected", "UNEXPECTED"},
};
const OutcomeWords* row_of(Outcome o) {
  for (const OutcomeWords& w : kOutcomes) {
    if (w.value == o) return &w;
  }
  return nullptr;
}
}  // namespace

std::string_view to_string(Outcome o) { return row_of(o) ? row_of(o)->word : "?"; }
std::string_view outcome_label(Outcome o) { return row_of(o) ? row_of(o)->label : "?"; }
std::optional<Outcome> parse_outcome(std::string_view s) {
  for (const OutcomeWords& w : kOutcomes) {
    if (w.word == s) return w.value;
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

namespace {

const Check* find_check(const Repetition& r, const std::string& name) {
  auto it = std::find_if(r.checks.begin(), r.checks.end(), [&](const Check& c) { return c.name == name; });
  return it == r.checks.end() ? nullptr : &*it;
}

// What the repetitions say together: which ran unexpectedly (with the evidence of each), whether
// all were skipped, and the first interruption's reason.
struct RepetitionTally {
  bool any_interrupted = false, all_skipped = false;
  std::string interrupt_reason;
};

RepetitionTally tally_repetitions(const CellResult& cell, CellOutcome& out) {
  const Expectation& e = cell.expected;
  RepetitionTally tally;
  tally.all_skipped = !cell.repetitions.empty();
  for (const Repetition& r : cell.repetitions) {
    tally.all_skipped &= r.status == RunStatus::kSkipped;
    if (r.status == RunStatus::kSkipped && out.reason.empty()) out.reason = r.status_message;
    if (r.status == RunStatus::kInterrupted) {
      tally.any_interrupted = true;
      if (tally.interrupt_reason.empty()) tally.interrupt_reason = r.status_message;
      continue;  // an interrupted repetition neither passes nor fails
    }
    if (r.status == RunStatus::kSkipped || r.as_expected) continue;
    ++out.repetitions_unexpected;
    for (const std::string& name : e.must_fail) {
      const Check* c = find_check(r, name);
      if (c == nullptr) {
        add_once(out.evidence, {name, "missed", "the check that must catch this planted bug did not run", r.index});
      } else if (c->verdict == Verdict::kNotExercised) {
        add_once(out.evidence, {name, "not-exercised", fmt::format("neither caught nor missed: {}", c->message), r.index});
      } else if (c->verdict != Verdict::kFail) {
        add_once(out.evidence, {name, "missed", fmt::format("did not catch the planted bug ({}: {})",
                                                            to_string(c->verdict), c->message), r.index});
      }
    }
    for (const Check& c : r.checks) {
      if (!check_as_expected(e, c) && !listed(e.must_fail, c.name) &&
          !(e.others_free && !listed(e.must_pass, c.name))) {
        add_once(out.evidence, {c.name, to_string(c.verdict), c.message, r.index});
      }
    }
  }
  return tally;
}

// A planted bug that needs luck (its checks may fail): caught when one of them failed in some
// repetition, with the rate; otherwise ok, saying it did not show, never a bare "ok".
void judge_luck_dependent_bug(const CellResult& cell, CellOutcome& out) {
  const Expectation& e = cell.expected;
  for (const std::string& name : e.may_fail) {
    int failed = 0, ran = 0;
    const Check* first = nullptr;
    int first_index = 0;
    for (const Repetition& r : cell.repetitions) {
      const Check* c = find_check(r, name);
      if (c == nullptr) continue;
      ++ran;
      if (c->verdict == Verdict::kFail && ++failed == 1) {
        first = c;
        first_index = r.index;
      }
    }
    if (!first) continue;
    add_once(out.evidence, {name, "fail", fmt::format("{} (in {} of {} repetitions)", first->message, failed, ran),
                            first_index});
  }
  out.kind = out.evidence.empty() ? Outcome::kOk : Outcome::kBugCaught;
  if (out.evidence.empty()) {
    out.reason = fmt::format("the planted bug did not show ({} may catch it)", fmt::join(e.may_fail, ", "));
  }
}

void classify(const CellResult& cell, const RepetitionTally& tally, CellOutcome& out) {
  const Expectation& e = cell.expected;
  if (cell.repetitions.empty()) {
    out.kind = Outcome::kInterrupted;
    out.reason = "no repetition ran";
  } else if (out.repetitions_unexpected > 0) {
    out.kind = Outcome::kUnexpected;
  } else if (tally.all_skipped) {
    out.kind = Outcome::kSkipped;
  } else if (tally.any_interrupted) {
    out.kind = Outcome::kInterrupted;
    out.reason = tally.interrupt_reason;
  } else if (e.others_free) {
    out.kind = Outcome::kFaultHandled;
  } else if (!e.must_fail.empty()) {
    out.kind = Outcome::kBugCaught;
  } else if (cell.known_bug && !e.may_fail.empty()) {
    judge_luck_dependent_bug(cell, out);
  } else {
    out.kind = Outcome::kOk;
  }
}

// The evidence of a caught bug or a handled fault: each must-fail check's message from the first
// repetition that ran it; a fault nothing had to catch (a program under `exec` must only end): how
// it ended, the fault itself and whatever the program did about it (an error exit, say).
void add_catch_evidence(const CellResult& cell, CellOutcome& out) {
  const Expectation& e = cell.expected;
  if (out.kind != Outcome::kBugCaught && out.kind != Outcome::kFaultHandled) return;
  for (const std::string& name : e.must_fail) {
    for (const Repetition& r : cell.repetitions) {
      const Check* c = find_check(r, name);
      if (c != nullptr && c->verdict == Verdict::kFail) {
        add_once(out.evidence, {name, "fail", c->message, r.index});
        break;
      }
    }
  }
  if (out.kind == Outcome::kFaultHandled && e.must_fail.empty() && !cell.repetitions.empty()) {
    const Repetition& r = cell.repetitions.front();
    for (const Check& c : r.checks) {
      if (c.name == checks::kFaultInjected || c.name == checks::kLiveness || c.verdict == Verdict::kFail) {
        add_once(out.evidence, {c.name, std::string(to_string(c.verdict)), c.message, r.index});
      }
    }
  }
}

std::string summarize(const Expectation& e, const CellOutcome& out) {
  std::vector<std::string> names;
  for (const Evidence& ev : out.evidence) names.push_back(ev.check);
  switch (out.kind) {
    case Outcome::kOk: return out.reason.empty() ? "ok" : "ok: " + out.reason;
    case Outcome::kBugCaught: return fmt::format("bug caught by {}", fmt::join(names, ", "));
    case Outcome::kFaultHandled:
      return e.must_fail.empty() ? "fault handled: the program ended after the fault"
                                 : fmt::format("fault handled ({} failed as it must)", fmt::join(names, ", "));
    case Outcome::kSkipped: return "skipped: " + out.reason;
    case Outcome::kInterrupted: return "interrupted: " + out.reason;
    case Outcome::kUnexpected:
      return fmt::format("unexpected in {} of {} repetition(s): {}", out.repetitions_unexpected, out.repetitions,
                         fmt::join(names, ", "));
  }
  return {};
}

}  // namespace

CellOutcome decide_outcome(const CellResult& cell) {
  CellOutcome out;
  out.repetitions = static_cast<int>(cell.repetitions.size());
  const RepetitionTally tally = tally_repetitions(cell, out);
  classify(cell, tally, out);
  add_catch_evidence(cell, out);
  out.summary = summarize(cell.expected, out);
  return out;
}

}  // namespace sharebench
