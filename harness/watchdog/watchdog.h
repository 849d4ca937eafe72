// Watchdog: supervises one cell repetition's workers until they have all exited. It reaps exits
// as they come, aborts the start barrier when a worker fails (so no sibling waits for it forever),
// and declares
//   a hang      when a worker's heartbeat has not moved for the hang timeout (while workers are
//               still launching, any sibling's launch progress counts, CPU time a launching
//               worker uses included, so a slow spawn of many workers is not taken for a hang),
//               or when launching runs past its own deadline (launch_budget.h),
//   a deadline  when the cell as a whole runs past its deadline,
//   an interrupt when SIGINT/SIGTERM reached the runner.
// In each case it records where every stuck worker was (/proc, at once), stops them all with
// SIGSTOP, takes their stacks (gdb, seconds) and the scenario's snapshot of the frozen state, then
// kills them and waits for the exits: the evidence is of the stuck state, not of what a worker did
// while gdb was busy with its siblings.
// Every limits.memory_interval_s it samples each worker process's memory (memory_probe.h).
// It never returns while a worker of the group still runs.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "harness/faults/fault_injector.h"
#include "harness/launch/launcher.h"
#include "harness/proc/memory_probe.h"
#include "harness/results/results.h"
#include "harness/scenario/worker_slot.h"

namespace sharebench {

struct WatchdogLimits {
  double hang_timeout_s = 10;
  double deadline_s = 120;
  bool gdb_stacks = false;  // on a hang, also take every thread's stack with gdb
  double launch_deadline_s = 0;  // 0: launching has no deadline of its own (the hang timeout alone)
  // How often each worker's memory is sampled. A worker that supervises a program (exec), which
  // measures that program's processes itself, is sampled rarely: its own memory is not the subject,
  // and a walk of a process with LibTorch mapped costs milliseconds.
  double memory_interval_s = 0.1;
};

struct Supervision {
  RunStatus status = RunStatus::kCompleted;
  std::string message;
  std::map<int, WorkerExit> exits;      // by rank
  std::map<int, std::string> stalls;    // rank → where it was stuck (hang/deadline only)
  std::map<int, std::string> stacks;    // rank → gdb stacks of its process, when asked for
  std::map<int, MemoryTrack> memory;    // rank → its process's memory samples (not under threads)
  double wall_s = 0;
};

// `before_teardown` runs once the stuck workers are frozen (SIGSTOP) and before they are killed:
// a consistent moment to read lock owners and waiters (a kill itself changes robust mutexes).
// `faults`, when given, is polled on every round of supervision and injects its fault from there.
// `on_tick`, when given, is called every round with the longest time any running worker has gone
// without progress (for a progress line's hang countdown).
Supervision supervise(WorkerGroup& group, HarnessBlock& block, const WatchdogLimits& limits,
                      const std::function<void()>& before_teardown = {}, FaultInjector* faults = nullptr,
                      const std::function<void(double quiet_s)>& on_tick = {});

}  // namespace sharebench
