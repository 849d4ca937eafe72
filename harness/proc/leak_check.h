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
// pid>-<random>-", the random part drawn once per run so that nobody can make the names first): the leak check counts only such /dev/shm entries, so other programs, and other runs
// on the same machine, creating their own segments meanwhile are never blamed on this cell. It is
// the runner's pid in the runner and in every worker, whatever its start method.
std::string run_shm_prefix();

// Called by the runner (and before the forkserver forks): every process started from here on
// knows the runner (SHAREBENCH_RUNNER_PID), and the runner becomes a child subreaper, so a process
// a worker started that outlives it is adopted by the runner and found by the leak check.
void mark_runner_process();
// Called in each worker process: it is named sharebench-r<rank> and its descendants carry that name
// (until they exec) and SHAREBENCH_WORKER_RANK (after), so a leftover process names its rank.
void mark_worker_process(int rank);
// Makes the calling process (the forkserver) a child subreaper too.
void become_subreaper();
// The forkserver's pid while one runs (-1: none), told by the forkserver itself: its children are
// the runner's descendants too, and it is not a leftover.
void set_forkserver_pid(pid_t pid);
pid_t forkserver_pid();

struct ResourceSnapshot {
  std::set<int> fds;                 // this process's open descriptors
  std::set<std::string> shm;         // names in /dev/shm that start with run_shm_prefix()
  std::vector<pid_t> descendants;    // processes whose parent is the runner or the forkserver
};

ResourceSnapshot take_resource_snapshot();
// This process's open descriptors.
std::set<int> open_descriptors();
// "fd 7 → /tmp/x, fd 9 → socket:[123]" for the descriptors in `after` not in `before`, capped.
std::string describe_new_descriptors(const std::set<int>& before, const std::set<int>& after, int* count);

// A snapshot taken after a repetition, once every process new since `before` has had a short
// grace (kLeftoverGrace) to end by itself: an orphan that is already exiting (a sanitizer's
// symbolizer whose parent just died) is reaped, not reported. A daemon that keeps running stays.
ResourceSnapshot take_settled_snapshot(const ResourceSnapshot& before);

// Compares two snapshots; returns the `no-leaks` check. A process left behind is named with its
// command and the rank that started it.
// `worker_leaks`: what the workers themselves reported left open (one entry per rank that did).
Check compare_resources(const ResourceSnapshot& before, const ResourceSnapshot& after,
                        const std::vector<std::string>& worker_leaks = {});

// Unlinks every run-prefixed /dev/shm entry in `after` that was not in `before`: reported, then
// removed, so a leak is never carried into the next repetition (where it would no longer be new)
// nor left on the machine.
void remove_leftover_segments(const ResourceSnapshot& before, const ResourceSnapshot& after);

// Kills (SIGKILL) every process in `after` that was not in `before`, with whatever it started
// meanwhile, and reaps those that are the runner's: a run never leaves a process behind.
void kill_leftover_processes(const ResourceSnapshot& before, const ResourceSnapshot& after);

}  // namespace sharebench
