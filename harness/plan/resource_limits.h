// resource_limits: the process and descriptor limits a run needs, checked before anything starts.
//
// A limit that is too low does not fail cleanly once a run is under way: with `ulimit -u 3`,
// LibTorch's thread-pool creation (at::set_num_threads) blocks forever before any watchdog runs;
// with `ulimit -n 6` sockets fail with EMFILE deep inside a launcher. So the runner estimates what
// the planned matrix needs (tasks: the runner's and each worker's threads; descriptors: the
// runner's and each rank's) and, before the forkserver or LibTorch starts, raises a soft limit up
// to its hard limit where that suffices, or refuses the run with one line that names the limit.
#pragma once

#include <string>
#include <vector>

#include "harness/plan/matrix.h"

namespace sharebench {

struct ResourceNeeds {
  long tasks = 0;        // processes and threads of this user the run adds at its peak (RLIMIT_NPROC)
  long descriptors = 0;  // open descriptors one process of the run may need (RLIMIT_NOFILE)
  std::string why_tasks;  // how `tasks` was made up, for the message
};

// What the largest cell of `cells` needs (cells run one at a time).
ResourceNeeds resource_needs(const std::vector<PlannedCell>& cells);

// Tasks (threads) the real user of this process runs now, counted in /proc.
long tasks_of_this_user();

// Raises soft limits to what `needs` asks where the hard limit allows; throws UsageError naming
// RLIMIT_NPROC or RLIMIT_NOFILE, the limit, the need and what to do, where it does not.
void ensure_resource_limits(const ResourceNeeds& needs);

}  // namespace sharebench
