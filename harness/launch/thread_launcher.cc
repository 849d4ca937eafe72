// ThreadLauncher: the workers are threads of one host process. ThreadSanitizer sees races and
// lock-order inversions between threads, not between processes through shared memory, so this is
// the start method for sanitizer runs. The host is forked from the runner so that a hung thread
// can be torn down with its process; the runner itself stays single-threaded. The host also counts
// the descriptors its worker threads left open, since the ranks share one descriptor table.
#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "harness/launch/child_process_group.h"
#include "harness/launch/launcher.h"
#include "harness/proc/leak_check.h"
#include "harness/scenario/worker_slot.h"
#include "harness/proc/sanitizer_reports.h"

namespace sharebench {

namespace {
class ThreadLauncher : public Launcher {
 public:
  StartMethod method() const override { return StartMethod::kThread; }

  std::unique_ptr<WorkerGroup> launch(const CellConfig& cell, SharedArena& arena) override {
    auto group = std::make_unique<ChildProcessGroup>();
    std::vector<int> ranks;
    for (int rank = 0; rank < cell.procs; ++rank) ranks.push_back(rank);
    group->fork_child(ranks, "fork (thread host)", [&cell, &arena] {
      HarnessBlock& block = *arena.lookup<HarnessBlock>(HarnessBlock::kRegionName);
      route_sanitizer_reports(block.private_dir);
      // The host's descriptors before any worker thread ran: what is open beyond them once all have
      // returned, the workers left open. Not under a sanitizer: its runtime opens report files and
      // symbolizer pipes in this process as it reports, and they are not the program's.
      const bool count_leaks = sanitizer_in_build()[0] == '\0';
      const std::set<int> fds_before = count_leaks ? open_descriptors() : std::set<int>{};
      std::vector<int> codes(static_cast<std::size_t>(cell.procs), kWorkerExitOk);
      std::vector<std::thread> threads;
      for (int rank = 0; rank < cell.procs; ++rank) {
        threads.emplace_back([&, rank] { codes[static_cast<std::size_t>(rank)] = run_worker(cell, arena, rank); });
      }
      int worst = kWorkerExitOk;
      for (int rank = 0; rank < cell.procs; ++rank) {
        threads[static_cast<std::size_t>(rank)].join();
        worst = std::max(worst, codes[static_cast<std::size_t>(rank)]);
      }
      if (count_leaks) {
        int leaked = 0;
        const std::string names = describe_new_descriptors(fds_before, open_descriptors(), &leaked);
        block.thread_host_leaked_fds = leaked;
        std::snprintf(block.thread_host_leaked_fd_names, sizeof block.thread_host_leaked_fd_names, "%s", names.c_str());
      }
      return worst;
    });
    return group;
  }
};
}  // namespace

std::unique_ptr<Launcher> make_thread_launcher() { return std::make_unique<ThreadLauncher>(); }

}  // namespace sharebench
