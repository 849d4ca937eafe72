// FaultPlan: one fault to inject into a cell repetition, in the spirit of Jepsen's nemesis: which
// kind, whom and when. What each kind does is its nemesis's (harness/faults/nemeses/: kill,
// kill-holding-lock, stall); this is the plan's text form only, and parse() checks its syntax, not
// the kind (harness/faults/nemesis.h: parse_fault_plan does both). The runner injects a rank's
// fault from outside the workers when the target worker's own step count reaches `at_step`.
// Killing rank 0 of the ipc scenario is killing the producer mid-stream.
// The textual form, used on the command line and in cell ids, is KIND:RANK@STEP, with +SECONDS
// for a stall: "kill:1@20", "kill-holding-lock:0@5", "stall:1@10+3".
// `sharebench exec` targets a process of the program's tree instead of a rank, at a time rather
// than a step (a program need not report steps): "kill:child@1" (SIGKILL the first child of the
// program, by order of birth, 1 s after it was born), "kill:child3@0.5" (the third), "kill:random@2"
// (2 s after the program started, a child drawn with the cell's seed), "stall:child@1+5". The
// supervisor of the tree injects those (wings/exec), not the runner; multiprocessing's own helper
// processes (resource tracker, forkserver) are never chosen.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sharebench {

// Ranks are 0..63: a cell has at most 64 workers (ProcessMutex's waiter bitmap is one word).
inline constexpr int kMaxFaultRank = 63;

// Whom a fault hits: a worker by rank (the runner's scenarios), or a process of an exec'd
// program's tree (`child`: by order of birth; `random`: drawn with the cell's seed).
enum class FaultTarget { kRank, kChild, kRandom };

struct FaultPlan {
  std::string kind;    // a nemesis's name ("kill"); empty: no fault
  int rank = 0;
  std::int64_t at_step = 1;
  double hold_s = 0;   // +SECONDS: how long the fault holds its victim (a stall's length); 0: not given
  FaultTarget target = FaultTarget::kRank;
  int child = 1;       // kChild: the N-th child of the program by order of birth, from 1
  double at_s = 0;     // kChild: seconds after that child was born; kRandom: after the program started

  bool active() const { return !kind.empty(); }
  bool targets_tree() const { return active() && target != FaultTarget::kRank; }
  // "kill:1@20", "stall:0@10+3"; "" when none.
  std::string spec() const;
  // The syntax only; throws std::invalid_argument with a sentence that says what is wrong.
  static FaultPlan parse(std::string_view spec);
};

}  // namespace sharebench
