// program_supervisor: the work of `sharebench exec`'s one worker. It becomes a child subreaper,
// starts the user's program (with the Python hooks on PYTHONPATH, the progress file and the start
// method in its environment) and, until the program and every process it started have ended:
//   - tracks the whole tree (every descendant, daemons included: orphans are re-parented to it),
//     sampling each process's CPU time, memory (RSS/PSS/USS/shared) and the /dev/shm files it uses;
//   - turns the program's progress into heartbeats for the runner's watchdog: its beats when it
//     sends any, else CPU time used anywhere in the tree;
//   - injects a `--fault KIND:child[N]@S` or `KIND:random@S` into the tree;
//   - once the program has ended, gives the rest of the tree a short grace, then kills and reports
//     whatever is still alive.
// Everything it learns goes to the ExecBlock in the arena, for the runner.
#pragma once

#include <csignal>
#include <string>
#include <vector>

#include "wings/exec/exec_block.h"
#include "harness/scenario/scenario.h"

namespace sharebench {

// The signal the runner sends a hung Python process for its stacks (faulthandler, registered by
// the injected sitecustomize). Realtime, so no program's own handler is likely to be on it.
inline int python_stack_signal() { return SIGRTMIN + 4; }

// --duration: how long the program may take to shut down after its SIGINT before SIGTERM, and
// after that before SIGKILL.
inline constexpr double kStopGraceS = 10;
inline constexpr double kTermGraceS = 3;
// After the program's end, how long multiprocessing's and torch's helpers by design (the resource
// tracker, the forkserver, torch_shm_manager) may take to finish and reclaim what they hold before
// they are killed and reported; any other process gets a second.
inline constexpr double kHelperGraceS = 10;

// exec's variants: "own" (the program's own choice of start method), then each of
// python_start_methods(), forced in every Python process of the program (--mp-start).
inline constexpr const char* kOwnStartMethod = "own";
// The start method the cell forces on the program: its variant, "" for "own".
inline std::string forced_start_method(const CellConfig& cell) {
  return cell.variant == kOwnStartMethod ? std::string() : cell.variant;
}

// The program's argv[0] resolved as execvp would (PATH, or relative to `workdir`): the absolute path
// of an executable file, or "" with `why` set.
std::string resolve_program(const std::vector<std::string>& command, const std::string& workdir, std::string* why);

// Runs the cell's program to its end (and its tree's), filling `block`. Throws std::runtime_error
// when the program cannot be started.
void supervise_program(WorkerContext& ctx, ExecBlock& block);

}  // namespace sharebench
