// launch_budget: how long the workers of a cell may take to launch before that is a hang.
//
// Launching is not stepping: spawning 64 LibTorch processes on 2 cores takes about 40 s (each
// exec loads and initialises LibTorch, about 0.6 s of CPU), far past any sensible hang timeout.
// So launching has its own deadline, scaled by the number of workers, the start method's measured
// cost per worker and the cores they share, and the watchdog counts a launching worker's CPU time as
// progress. A worker that blocks while launching (no CPU, no phase change) is still a hang after
// the hang timeout; one that never finishes launching is a hang at the launch deadline.
#pragma once

#include "harness/config/cell_config.h"

namespace sharebench {

// Wall seconds of one core a worker of `start` takes to launch on this kind of machine (measured:
// docs/performance.md, "Launch").
double launch_cost_per_worker_s(StartMethod start);

// The cores this process may run on (its affinity mask), at least 1.
int usable_cores();

// The launch deadline for `procs` workers of `start` on `cores` cores: the hang timeout plus four
// times the expected launch time (slack for a loaded machine).
double launch_deadline_s(StartMethod start, int procs, int cores, double hang_timeout_s);

}  // namespace sharebench
