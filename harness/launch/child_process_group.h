// ChildProcessGroup: a WorkerGroup of direct children of the runner (fork, spawn, thread host).
// One child may carry several ranks (the thread host carries all of them); every launcher forks its
// children through fork_child().
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <system_error>
#include <utility>
#include <vector>

#include "harness/launch/launcher.h"
#include "harness/util/interrupt.h"

namespace sharebench {

class ChildProcessGroup : public WorkerGroup {
 public:
  ChildProcessGroup() = default;
  ~ChildProcessGroup() override;
  void add(pid_t pid, std::vector<int> ranks);

  // Forks one child of the runner carrying `ranks`, and adds it. The child dies with the runner,
  // runs `body` (which returns its exit code; after fork only what is safe in a child of a
  // threaded process, until it execs or starts its own) and exits with that code, flushing first.
  // Throws std::system_error naming `what` when fork fails.
  template <typename Body>
  void fork_child(std::vector<int> ranks, const char* what, Body&& body) {
    const pid_t parent = ::getpid();
    std::fflush(nullptr);  // or the child would flush the runner's buffered output again
    const pid_t pid = ::fork();
    if (pid < 0) throw std::system_error(errno, std::generic_category(), what);
    if (pid == 0) {
      die_as_worker_with_parent(parent);
      restore_default_interrupt_handlers();  // a signal sent to a worker ends it, as under spawn
      const int code = body();
      std::fflush(nullptr);
      ::_exit(code);
    }
    add(pid, std::move(ranks));
  }

  std::vector<pid_t> pids() const override;
  std::vector<WorkerExit> wait_exits(std::chrono::milliseconds timeout) override;
  void send_all(int sig) override;
  int running() const override;
  bool ranks_share_a_process() const override;

 private:
  struct Child {
    pid_t pid;
    std::vector<int> ranks;
    bool reaped = false;
    int end_fd = -1;  // readable when the child ends (harness/util/process_end.h); -1 where there is none
  };
  std::vector<WorkerExit> reap(bool block);
  std::vector<Child> children_;
};

}  // namespace sharebench
