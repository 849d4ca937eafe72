// SpawnLauncher: each worker is a fresh exec of this binary in its hidden `__worker` mode, given
// the arena fd (inherited across exec) and the cell as JSON on its command line. Nothing of the
// runner's memory or threads reaches it: the slow but safe start method.
#include <fcntl.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "harness/launch/child_process_group.h"
#include "harness/launch/launcher.h"

namespace sharebench {

namespace {
std::string self_executable() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n < 0) throw std::system_error(errno, std::generic_category(), "readlink(/proc/self/exe)");
  return std::string(buf, static_cast<std::size_t>(n));
}

class SpawnLauncher : public Launcher {
 public:
  StartMethod method() const override { return StartMethod::kSpawn; }

  std::unique_ptr<WorkerGroup> launch(const CellConfig& cell, SharedArena& arena) override {
    auto group = std::make_unique<ChildProcessGroup>();
    const std::string exe = self_executable();
    const std::string cell_json = cell.to_json();
    const std::string fd_arg = std::to_string(arena.fd());
    // OpenBLAS reads its thread count once, as it loads, and otherwise starts a pool of a thread per
    // core whose first tenth of a second is a spin beside the workers (docs/performance.md): a
    // spawned worker is told the worker's count up front, unless the user chose one.
    std::vector<std::string> env_text;
    bool blas_threads_given = false;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      blas_threads_given |= std::string_view(*e).rfind("OPENBLAS_NUM_THREADS=", 0) == 0;
      env_text.emplace_back(*e);
    }
    if (!blas_threads_given) env_text.push_back("OPENBLAS_NUM_THREADS=" + std::to_string(cell.workload.threads_per_worker));
    std::vector<char*> envp;
    for (std::string& e : env_text) envp.push_back(e.data());
    envp.push_back(nullptr);
    for (int rank = 0; rank < cell.procs; ++rank) {
      const std::string rank_arg = std::to_string(rank);
      // Built before fork: the child only calls async-signal-safe functions until exec.
      std::vector<char*> argv{const_cast<char*>("sharebench"), const_cast<char*>("__worker"),
                              const_cast<char*>(fd_arg.c_str()), const_cast<char*>(rank_arg.c_str()),
                              const_cast<char*>(cell_json.c_str()), nullptr};
      group->fork_child({rank}, "fork (spawn)", [&]() -> int {
        ::fcntl(arena.fd(), F_SETFD, 0);  // this copy of the fd survives exec
        ::execve(exe.c_str(), argv.data(), envp.data());
        static const char msg[] = "sharebench: exec of worker failed\n";
        [[maybe_unused]] auto ignored = ::write(2, msg, sizeof msg - 1);
        ::_exit(kWorkerExitExecvFailed);  // not through stdio: nothing of the runner's to flush twice
      });
    }
    return group;
  }
};
}  // namespace

std::unique_ptr<Launcher> make_spawn_launcher() { return std::make_unique<SpawnLauncher>(); }

}  // namespace sharebench
