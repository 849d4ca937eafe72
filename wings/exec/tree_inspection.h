// tree_inspection: what the runner does with a hung program's tree (the supervisor frozen by the
// watchdog, the program's processes still running): asks every Python process for its Python
// stacks (faulthandler, through the injected sitecustomize), freezes every process with SIGSTOP,
// reads where each is (/proc) and, with gdb, its native stacks, then kills them all. The
// evidence is of the stuck state: the Python dumps are taken first, while the processes can still
// run their signal handler, and the rest while nothing moves.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>

#include "wings/exec/exec_block.h"

namespace sharebench {

struct ProcessEvidence {
  std::string state;         // /proc: each thread's state, wait channel, syscall
  std::string python_stack;  // faulthandler's dump ("" for a process that is not Python)
  std::string native_stack;  // gdb's ("" without gdb, or beyond the first few processes)
};

// Every live process of the tree under `block.supervisor_pid`, by pid. Kills them all before it
// returns. `gdb`: take native stacks (about 2 s per process; at most kMaxNativeStacks).
std::map<pid_t, ProcessEvidence> inspect_and_kill_tree(const ExecBlock& block, bool gdb);

inline constexpr int kMaxNativeStacks = 4;

}  // namespace sharebench
