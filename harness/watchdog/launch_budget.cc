// launch_budget: the per-start-method launch costs and the launch deadline built from them.
#include "harness/watchdog/launch_budget.h"

#include <sched.h>

#include <algorithm>

namespace sharebench {

double launch_cost_per_worker_s(StartMethod start) {
  switch (start) {
    case StartMethod::kSpawn: return 1.2;        // exec + LibTorch's static initialisation, under contention
    case StartMethod::kFork: return 0.05;        // copy of the page tables, grows with the parent
    case StartMethod::kForkserver: return 0.05;  // a fork of the small server
    case StartMethod::kThread: return 0.01;
  }
  return 1.2;
}

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(CPU_COUNT(&set), 1);
}

double launch_deadline_s(StartMethod start, int procs, int cores, double hang_timeout_s) {
  const double expected = launch_cost_per_worker_s(start) * std::max(procs, 1) / std::max(cores, 1);
  return hang_timeout_s + 4 * expected;
}

}  // namespace sharebench
