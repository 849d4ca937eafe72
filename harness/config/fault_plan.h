// FaultPlan: one fault to inject into a cell repetition, in the spirit of Jepsen's nemesis. The
// runner injects it from outside the workers, with signals, when the target worker's own step
// count reaches `at_step`:
//   kill               SIGKILL the worker (a crash: OOM killer, a segfault elsewhere)
//   kill-holding-lock  SIGSTOP it until it is seen holding a ProcessMutex, then SIGKILL it there:
//                      the survivors must recover the lock (robust mutex) or the cell must end
//   stall              SIGSTOP it for `stall_s` seconds, then SIGCONT (a descheduled VM, a debugger
//                      pause); longer than the hang timeout, the watchdog must call it a hang
// Killing rank 0 of the ipc scenario is killing the producer mid-stream.
// The textual form, used on the command line and in cell ids, is KIND:RANK@STEP, with +SECONDS
// for a stall: "kill:1@20", "kill-holding-lock:0@5", "stall:1@10+3".
// `sharebench exec` targets a process of the program's tree instead of a rank, at a time rather
// than a step (a program need not report steps): "kill:child@1" (SIGKILL the first child of the
// program, by order of birth, 1 s after it was born), "kill:child3@0.5" (the third), "kill:random@2"
// (2 s after the program started, a child drawn with the cell's seed), "stall:child@1+5". The
// supervisor of the tree injects those (scenarios/exec), not the runner; multiprocessing's own helper
// processes (resource tracker, forkserver) are never chosen.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sharebench {

// Ranks are 0..63: a cell has at most 64 workers (ProcessMutex's waiter bitmap is one word).
inline constexpr int kMaxFaultRank = 63;

enum class FaultKind { kNone, kKill, kKillHoldingLock, kStall };
// Whom a fault hits: a worker by rank (the runner's scenarios), or a process of an exec'd
// program's tree (`child`: by order of birth; `random`: drawn with the cell's seed).
enum class FaultTarget { kRank, kChild, kRandom };

struct FaultPlan {
  FaultKind kind = FaultKind::kNone;
  int rank = 0;
  std::int64_t at_step = 1;
  double stall_s = 0;  // stall only
  FaultTarget target = FaultTarget::kRank;
  int child = 1;       // kChild: the N-th child of the program by order of birth, from 1
  double at_s = 0;     // kChild: seconds after that child was born; kRandom: after the program started

  bool active() const { return kind != FaultKind::kNone; }
  bool targets_tree() const { return active() && target != FaultTarget::kRank; }
  // "kill:1@20", "stall:0@10+3"; "" when none.
  std::string spec() const;
  // Throws std::invalid_argument with a sentence that says what is wrong.
  static FaultPlan parse(std::string_view spec);
};

std::string_view to_string(FaultKind k);
std::optional<FaultKind> parse_fault_kind(std::string_view s);

}  // namespace sharebench
