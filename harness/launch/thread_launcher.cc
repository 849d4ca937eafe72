// ThreadLauncher: the workers are threads of one host process. ThreadSanitizer sees races and
// lock-order inversions between threads, not between processes through shared memory, so this is
// the start method for sanitizer runs. The host is forked from the runner so that a hung thread
// can be torn down with its process; the runner itself stays single-threaded.
#include <unistd.h>

#include <cstdio>
#include <system_error>
#include <thread>
#include <vector>

#include "harness/launch/child_process_group.h"
#include "harness/launch/launcher.h"
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
      route_sanitizer_reports(arena.lookup<HarnessBlock>(HarnessBlock::kRegionName)->private_dir);
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
      return worst;
    });
    return group;
  }
};
}  // namespace

std::unique_ptr<Launcher> make_thread_launcher() { return std::make_unique<ThreadLauncher>(); }

}  // namespace sharebench
