// Shared launcher pieces: the worker entry, the spawn worker mode, child-process groups, and the
// factory that picks a launcher per start method.
#include "harness/launch/launcher.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "harness/launch/child_process_group.h"
#include "harness/util/parent_death.h"
#include "harness/util/process_end.h"

namespace sharebench {

std::unique_ptr<Launcher> make_fork_launcher();
std::unique_ptr<Launcher> make_spawn_launcher();
std::unique_ptr<Launcher> make_forkserver_launcher();
std::unique_ptr<Launcher> make_thread_launcher();

std::unique_ptr<Launcher> make_launcher(StartMethod method) {
  switch (method) {
    case StartMethod::kFork: return make_fork_launcher();
    case StartMethod::kSpawn: return make_spawn_launcher();
    case StartMethod::kForkserver: return make_forkserver_launcher();
    case StartMethod::kThread: return make_thread_launcher();
  }
  return nullptr;
}

void die_as_worker_with_parent(pid_t expected_parent) { die_with_parent(expected_parent, SIGKILL, kWorkerExitSetupFailed); }

ChildProcessGroup::~ChildProcessGroup() {
  kill_all();
  reap(/*block=*/true);
}

void ChildProcessGroup::add(pid_t pid, std::vector<int> ranks) {
  children_.push_back(Child{pid, std::move(ranks), false, open_process_end(pid)});
}

std::vector<pid_t> ChildProcessGroup::pids() const {
  std::vector<pid_t> out;
  for (const Child& c : children_) {
    for (std::size_t i = 0; i < c.ranks.size(); ++i) out.push_back(c.pid);
  }
  return out;
}

int ChildProcessGroup::running() const {
  int n = 0;
  for (const Child& c : children_) {
    if (!c.reaped) n += static_cast<int>(c.ranks.size());
  }
  return n;
}

bool ChildProcessGroup::ranks_share_a_process() const {
  return std::any_of(children_.begin(), children_.end(), [](const Child& c) { return c.ranks.size() > 1; });
}

std::vector<WorkerExit> ChildProcessGroup::reap(bool block) {
  std::vector<WorkerExit> out;
  for (Child& c : children_) {
    if (c.reaped) continue;
    int status = 0;
    pid_t r;
    do {
      r = ::waitpid(c.pid, &status, block ? 0 : WNOHANG);
    } while (r < 0 && errno == EINTR);
    if (r == 0) continue;
    c.reaped = true;
    if (c.end_fd >= 0) ::close(c.end_fd);
    c.end_fd = -1;
    for (int rank : c.ranks) {
      WorkerExit e;
      e.rank = rank;
      e.pid = c.pid;
      if (r < 0) {  // not our child any more (should not happen): report as lost
        e.exited = false;
        e.signal = 0;
      } else if (WIFEXITED(status)) {
        e.exited = true;
        e.exit_code = WEXITSTATUS(status);
      } else if (WIFSIGNALED(status)) {
        e.signal = WTERMSIG(status);
      }
      out.push_back(e);
    }
  }
  return out;
}

// Sleeps on the children's pidfds, so an exit is seen at once and the runner does not wake every
// millisecond beside workers that keep every core busy; polls waitpid() where there are none.
std::vector<WorkerExit> ChildProcessGroup::wait_exits(std::chrono::milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto exits = reap(/*block=*/false);
    const auto now = std::chrono::steady_clock::now();
    if (!exits.empty() || running() == 0 || now >= until) return exits;
    std::vector<int> fds;
    bool every_one = true;
    for (const Child& c : children_) {
      if (c.reaped) continue;
      fds.push_back(c.end_fd);
      every_one = every_one && c.end_fd >= 0;
    }
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - now);
    if (!every_one || !wait_for_an_end(fds, left)) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void ChildProcessGroup::send_all(int sig) {
  for (const Child& c : children_) {
    if (!c.reaped) ::kill(c.pid, sig);
  }
}

}  // namespace sharebench
