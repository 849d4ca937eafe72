// resource_limits: estimates from the planned cells, /proc counting and setrlimit.
#include "harness/plan/resource_limits.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "harness/plan/cell_flags.h"

namespace sharebench {

namespace {
// Measured on this project's scenarios (docs/security.md, "Resource limits"): a worker process has
// its main thread and one OpenBLAS thread, three more with Gloo, plus LibTorch's intra-op pool; the
// runner its main thread, the lane of setup()/check(), the forkserver and its own pool.
constexpr long kTasksPerWorkerBeyondPool = 4;
constexpr long kRunnerTasksBeyondPool = 3;
// Descriptors: a runner holds about 7 plus one connection per forkserver worker; a worker process
// up to 17 (Gloo pairs, passed segments); a thread-mode host about 8 per rank. Doubled for slack.
constexpr long kBaseDescriptors = 64;
constexpr long kDescriptorsPerRankInProcess = 2;
constexpr long kDescriptorsPerRankInThreads = 16;
// A program under exec: its supervisor and the guard beside it, and a program of a parent and two
// workers at the least (its own may have more: the estimate can only be a floor).
constexpr long kProgramSupervisorTasks = 2;
constexpr long kProgramProcesses = 3;

std::string limit_text(rlim_t v) { return v == RLIM_INFINITY ? "unlimited" : std::to_string(v); }

// Raises the soft limit of `resource` to at least `need` if the hard limit allows; true if the
// soft limit now suffices.
bool raise_soft_limit(int resource, rlim_t need, rlimit* now) {
  if (::getrlimit(resource, now) != 0) return true;  // cannot tell: let the run try
  if (now->rlim_cur == RLIM_INFINITY || now->rlim_cur >= need) return true;
  if (now->rlim_max != RLIM_INFINITY && now->rlim_max < need) return false;
  rlimit raised = *now;
  raised.rlim_cur = need;
  if (::setrlimit(resource, &raised) != 0) return false;
  *now = raised;
  return true;
}
}  // namespace

ResourceNeeds resource_needs(const std::vector<PlannedCell>& cells) {
  ResourceNeeds needs;
  long pool = 1;
  for (const PlannedCell& p : cells) pool = std::max(pool, static_cast<long>(p.config.workload.threads_per_worker));
  needs.tasks = kRunnerTasksBeyondPool + pool;
  needs.descriptors = kBaseDescriptors;
  long widest = 0;
  for (const PlannedCell& p : cells) {
    const CellConfig& c = p.config;
    const long per_worker = kTasksPerWorkerBeyondPool + c.workload.threads_per_worker;
    const bool program = !c.command.empty();
    const long workers = program ? kProgramProcesses : c.procs;
    const long tasks = kRunnerTasksBeyondPool + pool + workers * per_worker + (program ? kProgramSupervisorTasks : 0);
    if (tasks > needs.tasks) {
      needs.tasks = tasks;
      widest = workers;
      needs.why_tasks = program ? fmt::format("the runner {}, exec's supervisor and guard, and a program of at least {} "
                                              "processes x {}", kRunnerTasksBeyondPool + pool, workers, per_worker)
                                : fmt::format("the runner {} and {} worker(s) x {}", kRunnerTasksBeyondPool + pool, c.procs, per_worker);
    }
    const long per_rank = c.start == StartMethod::kThread ? kDescriptorsPerRankInThreads : kDescriptorsPerRankInProcess;
    needs.descriptors = std::max(needs.descriptors, kBaseDescriptors + c.procs * per_rank);
  }
  if (widest == 0) needs.why_tasks = fmt::format("the runner {}", needs.tasks);
  return needs;
}

long tasks_of_this_user() {
  const uid_t me = ::getuid();
  long tasks = 0;
  DIR* proc = ::opendir("/proc");
  if (!proc) return 0;
  while (const dirent* e = ::readdir(proc)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::ifstream status(fmt::format("/proc/{}/status", e->d_name));
    std::string line;
    long uid = -1, threads = 0;
    while (std::getline(status, line)) {
      if (line.rfind("Uid:", 0) == 0) uid = std::strtol(line.c_str() + 4, nullptr, 10);  // the real uid
      if (line.rfind("Threads:", 0) == 0) threads = std::strtol(line.c_str() + 8, nullptr, 10);
    }
    if (uid == static_cast<long>(me)) tasks += threads;
  }
  ::closedir(proc);
  return tasks;
}

void ensure_resource_limits(const ResourceNeeds& needs) {
  rlimit files{};
  if (!raise_soft_limit(RLIMIT_NOFILE, static_cast<rlim_t>(needs.descriptors), &files)) {
    throw UsageError(fmt::format(
        "RLIMIT_NOFILE (ulimit -n) is {} (hard {}), and this run needs about {} open descriptors per process: "
        "raise it or run fewer processes",
        limit_text(files.rlim_cur), limit_text(files.rlim_max), needs.descriptors));
  }
  // The kernel does not apply RLIMIT_NPROC to root.
  if (::getuid() == 0) return;
  const long existing = tasks_of_this_user();
  rlimit procs{};
  if (!raise_soft_limit(RLIMIT_NPROC, static_cast<rlim_t>(existing + needs.tasks), &procs)) {
    throw UsageError(fmt::format(
        "RLIMIT_NPROC (ulimit -u) is {} (hard {}); this user already runs {} processes and threads, and this run adds "
        "about {} ({}): raise it or run fewer processes",
        limit_text(procs.rlim_cur), limit_text(procs.rlim_max), existing, needs.tasks, needs.why_tasks));
  }
}

}  // namespace sharebench
