// Launchers: one per start method, behind one interface. A launcher starts `procs` workers for a
// cell over an arena the runner already laid out; the WorkerGroup it returns reports exits and can
// kill everything. Destroying a group kills and reaps whatever still runs: no orphan outlives it.
//
//   fork        fork() of the runner; the child inherits the arena mapping.
//   spawn       fork()+exec of this binary in its hidden worker mode; the arena fd and the cell
//               (as JSON) are passed explicitly on the command line.
//   forkserver  a server forked at start-up, before torch is initialised, forks the worker on
//               request over a Unix socket; the arena fd crosses it with SCM_RIGHTS.
//   thread      one host process (forked) runs the workers as threads, so ThreadSanitizer sees
//               the sharing, and a hung thread can still be torn down with its process.
// Every child gets PR_SET_PDEATHSIG(SIGKILL): if the runner dies, its workers die with it.
#pragma once

#include <sys/types.h>

#include <csignal>

#include <chrono>
#include <memory>
#include <vector>

#include "harness/arena/shared_arena.h"
#include "harness/config/cell_config.h"

namespace sharebench {

struct WorkerExit {
  int rank = 0;
  pid_t pid = 0;
  bool exited = false;  // normal exit with exit_code; otherwise killed by `signal`
  int exit_code = 0;
  int signal = 0;
  bool clean() const { return exited && exit_code == 0; }
};

class WorkerGroup {
 public:
  virtual ~WorkerGroup() = default;
  // The process of each rank (in thread mode, every rank's host); 0 while unknown.
  virtual std::vector<pid_t> pids() const = 0;
  // Waits up to `timeout` for exits; returns the workers that exited since the last call.
  virtual std::vector<WorkerExit> wait_exits(std::chrono::milliseconds timeout) = 0;
  // Sends `sig` to every worker still running (SIGSTOP freezes them for a consistent snapshot).
  virtual void send_all(int sig) = 0;
  // SIGKILLs every worker still running; their exits then come through wait_exits.
  void kill_all() { send_all(SIGKILL); }
  // Ranks not yet reported as exited.
  virtual int running() const = 0;
  // True when several ranks live in one process (the thread start method): a rank's exit is then
  // only seen when the whole process ends, and the process's memory is not one rank's.
  virtual bool ranks_share_a_process() const { return false; }
};

class Launcher {
 public:
  virtual ~Launcher() = default;
  virtual StartMethod method() const = 0;
  virtual std::unique_ptr<WorkerGroup> launch(const CellConfig& cell, SharedArena& arena) = 0;
};

std::unique_ptr<Launcher> make_launcher(StartMethod method);

// Exit codes a worker process uses.
inline constexpr int kWorkerExitOk = 0;
inline constexpr int kWorkerExitFailed = 1;       // work() threw; the slot holds the message
inline constexpr int kWorkerExitSetupFailed = 2;  // could not attach the arena or build the scenario
inline constexpr int kWorkerExitExecvFailed = 127;

// Runs rank `rank` of `cell` in the calling process or thread; returns its exit code. Never throws.
int run_worker(const CellConfig& cell, SharedArena& arena, int rank);

// A hook every worker runs before the scenario is built (LibTorch sets its thread count here).
using WorkerInitHook = void (*)(const CellConfig&);
void set_worker_init_hook(WorkerInitHook hook);

// A hook the runner process runs once, after the forkserver has been started and before any cell
// (LibTorch sets the runner's thread count here). Like the worker hook, set at static-init time.
using RunnerInitHook = void (*)(const CellConfig&);
void set_runner_init_hook(RunnerInitHook hook);
void run_runner_init_hook(const CellConfig& base);

// Call first thing in main(): if argv asks for spawn's worker mode, runs the worker and returns
// true with its exit code in *exit_code.
bool maybe_run_as_worker(int argc, char** argv, int* exit_code);

// For worker processes right after fork: die with the parent, even if it already died (then with
// the exit code of a worker whose setup failed). harness/util/parent_death.h.
void die_as_worker_with_parent(pid_t expected_parent);

}  // namespace sharebench
