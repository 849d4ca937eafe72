// ChildProcessGroup: a WorkerGroup of direct children of the runner (fork, spawn, thread host).
// One child may carry several ranks (the thread host carries all of them).
#pragma once

#include <sys/types.h>

#include <vector>

#include "harness/launch/launcher.h"

namespace sharebench {

class ChildProcessGroup : public WorkerGroup {
 public:
  ChildProcessGroup() = default;
  ~ChildProcessGroup() override;
  void add(pid_t pid, std::vector<int> ranks);

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
  };
  std::vector<WorkerExit> reap(bool block);
  std::vector<Child> children_;
};

}  // namespace sharebench
