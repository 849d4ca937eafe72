// leak_check: what a cell repetition must leave behind — nothing. A snapshot of the runner's
// open file descriptors, the entries of /dev/shm and the live descendants (children of the runner
// and of the forkserver) is taken before a repetition and after it; any growth is a leak, reported
// as the `no-leaks` check with what leaked.
#pragma once

#include <sys/types.h>

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/results/results.h"

namespace sharebench {

// Named shared memory created for a run must be named with this prefix ("sharebench-<runner
// pid>-"): the leak check counts only such /dev/shm entries, so other programs, and other runs
// on the same machine, creating their own segments meanwhile are never blamed on this cell.
std::string run_shm_prefix();

struct ResourceSnapshot {
  std::set<int> fds;                 // this process's open descriptors
  std::set<std::string> shm;         // names in /dev/shm that start with run_shm_prefix()
  std::vector<pid_t> descendants;    // processes whose parent is the runner or the forkserver
};

ResourceSnapshot take_resource_snapshot();

// Compares two snapshots; returns the `no-leaks` check.
Check compare_resources(const ResourceSnapshot& before, const ResourceSnapshot& after);

}  // namespace sharebench
