// FaultInjector: signals, timing and the verdict of one injected fault.
#include "harness/faults/fault_injector.h"

#include <signal.h>
#include <sys/types.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include <fmt/format.h>

namespace sharebench {

namespace {
// Is thread `tid` of `pid` stopped (state T or t in /proc)? False once it is gone.
bool thread_stopped(pid_t pid, pid_t tid) {
  std::ifstream stat(fmt::format("/proc/{}/task/{}/stat", pid, tid > 0 ? tid : pid));
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto paren = text.rfind(')');
  if (paren == std::string::npos || paren + 2 >= text.size()) return false;
  const char state = text[paren + 2];
  return state == 'T' || state == 't';
}

bool wait_until_stopped(pid_t pid, pid_t tid, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (thread_stopped(pid, tid)) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return false;
}

constexpr auto kLockSeekPerPoll = std::chrono::milliseconds(50);
constexpr auto kLockSamplePeriod = std::chrono::microseconds(100);
}  // namespace

FaultInjector::FaultInjector(const FaultPlan& plan, double hang_timeout_s)
    : plan_(plan), hang_timeout_s_(hang_timeout_s) {}

bool FaultInjector::try_kill_holding_lock(pid_t pid, const WorkerSlot& slot) {
  const auto until = Clock::now() + kLockSeekPerPoll;
  while (Clock::now() < until) {
    if (slot.locks_held.load(std::memory_order_acquire) > 0) {
      ++lock_attempts_;
      ::kill(pid, SIGSTOP);
      // Read the count only once the worker's thread has really stopped: then it cannot change.
      if (wait_until_stopped(pid, slot.tid.load(), std::chrono::milliseconds(200)) &&
          slot.locks_held.load(std::memory_order_acquire) > 0) {
        ::kill(pid, SIGKILL);
        return true;
      }
      ::kill(pid, SIGCONT);  // it let go before it stopped: try again
    }
    std::this_thread::sleep_for(kLockSamplePeriod);
  }
  return false;
}

void FaultInjector::poll(WorkerGroup& group, const HarnessBlock& block, const std::map<int, WorkerExit>& exited) {
  if (stage_ == Stage::kDone || plan_.rank >= block.procs || exited.count(plan_.rank)) {
    if (stage_ != Stage::kStalled) stage_ = Stage::kDone;
    return;
  }
  const auto pids = group.pids();
  const pid_t pid = pids.at(static_cast<std::size_t>(plan_.rank));
  if (pid <= 0) return;
  const WorkerSlot& slot = block.slots[plan_.rank];
  const std::int64_t steps = slot.steps.load(std::memory_order_acquire);
  switch (stage_) {
    case Stage::kWaiting:
      if (steps < plan_.at_step) return;
      if (plan_.kind == FaultKind::kKill) {
        injected_at_step_ = steps;
        ::kill(pid, SIGKILL);
        injected_ = true;
        stage_ = Stage::kDone;
      } else if (plan_.kind == FaultKind::kStall) {
        injected_at_step_ = steps;
        ::kill(pid, SIGSTOP);
        stopped_pid_ = pid;
        injected_ = true;
        stall_until_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(plan_.stall_s));
        stage_ = Stage::kStalled;
      } else {
        stage_ = Stage::kSeekingLock;
        poll(group, block, exited);
      }
      return;
    case Stage::kSeekingLock:
      if (try_kill_holding_lock(pid, slot)) {
        injected_at_step_ = slot.steps.load();
        injected_ = true;
        stage_ = Stage::kDone;
      }
      return;
    case Stage::kStalled:
      if (Clock::now() >= stall_until_) release(group, exited);
      return;
    case Stage::kDone:
      return;
  }
}

void FaultInjector::release(WorkerGroup& /*group*/, const std::map<int, WorkerExit>& exited) {
  if (stage_ == Stage::kStalled && stopped_pid_ > 0 && !exited.count(plan_.rank)) ::kill(stopped_pid_, SIGCONT);
  if (stage_ == Stage::kStalled || stage_ == Stage::kSeekingLock) stage_ = Stage::kDone;
  stopped_pid_ = 0;
}

std::string FaultInjector::outcome(const HarnessBlock& block) const {
  const int r = plan_.rank;
  if (r >= block.procs) return fmt::format("not injected: the cell has no rank {} ({} workers)", r, block.procs);
  const std::int64_t steps = block.slots[r].steps.load();
  if (!injected_) {
    if (plan_.kind == FaultKind::kKillHoldingLock && steps >= plan_.at_step) {
      return fmt::format("not injected: rank {} was never caught holding a lock after step {} ({} tries; the "
                         "scenario may take no ProcessMutex)",
                         r, plan_.at_step, lock_attempts_);
    }
    return fmt::format("not injected: rank {} ended at step {}, before step {}", r, steps, plan_.at_step);
  }
  switch (plan_.kind) {
    case FaultKind::kKill:
      return fmt::format("rank {} killed with SIGKILL at step {} (planned at {})", r, injected_at_step_,
                         plan_.at_step);
    case FaultKind::kKillHoldingLock:
      return fmt::format("rank {} killed with SIGKILL while holding a lock, at step {} (planned from {})", r,
                         injected_at_step_, plan_.at_step);
    case FaultKind::kStall:
      return fmt::format("rank {} stopped with SIGSTOP at step {} for {} s (hang timeout {} s)", r,
                         injected_at_step_, plan_.stall_s, hang_timeout_s_);
    case FaultKind::kNone:
      break;
  }
  return "no fault";
}

Check FaultInjector::check(const HarnessBlock& block) const {
  return Check{"fault-injected", injected_ ? Verdict::kPass : Verdict::kUnknown,
               static_cast<double>(injected_at_step_), outcome(block)};
}

Expectation expectation_under_fault(const FaultPlan& plan, double hang_timeout_s) {
  Expectation e;
  if (!plan.active()) return e;
  if (plan.targets_tree()) {
    // A child of an exec'd program killed or stalled: the program must still end, however it
    // chooses (an error exit is the right answer to a dead worker), not hang; the harness must
    // inject the fault and leave nothing behind.
    e.others_free = true;
    // Nor may it leave anything behind: a process, a /dev/shm segment.
    e.must_pass = {"liveness", "fault-injected", "no-leaks", "no-survivors", "shm-reclaimed", "checker", "setup"};
    return e;
  }
  const bool must_end_badly = plan.kind != FaultKind::kStall || plan.stall_s >= hang_timeout_s;
  if (must_end_badly) {
    e.must_fail = {"liveness"};
    e.others_free = true;
    e.must_pass = {"no-leaks", "fault-injected", "checker", "setup"};
  } else {
    e.must_pass = {"fault-injected"};
  }
  return e;
}

}  // namespace sharebench
