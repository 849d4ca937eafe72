// ForkLauncher: workers are fork() children of the runner and inherit its arena mapping.
// Hazard: a fork child inherits only the forking thread; a lock held by any other
// thread of the runner (an OpenMP pool, a queue feeder) stays locked forever in the child. The
// runner keeps one intra-op thread, and each worker sets its own count before touching torch.
#include <unistd.h>

#include <cstdio>
#include <system_error>

#include "harness/launch/child_process_group.h"
#include "harness/launch/launcher.h"

namespace sharebench {

namespace {
class ForkLauncher : public Launcher {
 public:
  StartMethod method() const override { return StartMethod::kFork; }

  std::unique_ptr<WorkerGroup> launch(const CellConfig& cell, SharedArena& arena) override {
    auto group = std::make_unique<ChildProcessGroup>();
    for (int rank = 0; rank < cell.procs; ++rank) {
      group->fork_child({rank}, "fork", [&cell, &arena, rank] { return run_worker(cell, arena, rank); });
    }
    return group;
  }
};
}  // namespace

std::unique_ptr<Launcher> make_fork_launcher() { return std::make_unique<ForkLauncher>(); }

}  // namespace sharebench
