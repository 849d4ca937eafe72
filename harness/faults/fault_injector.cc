// FaultInjector: signals, timing and the verdict of one injected fault.
#include "harness/faults/fault_injector.h"

#include <signal.h>
#include <sys/types.h>

#include <string>

#include <fmt/format.h>

namespace sharebench {

FaultInjector::FaultInjector(const FaultPlan& plan, double hang_timeout_s)
    : plan_(plan), hang_timeout_s_(hang_timeout_s) {}

void FaultInjector::poll(WorkerGroup& group, HarnessBlock& block, const std::map<int, WorkerExit>& exited) {
  if (stage_ == Stage::kDone || plan_.rank >= block.procs || exited.count(plan_.rank)) {
    if (stage_ != Stage::kStalled) stage_ = Stage::kDone;
    return;
  }
  const auto pids = group.pids();
  const pid_t pid = pids.at(static_cast<std::size_t>(plan_.rank));
  if (pid <= 0) return;
  WorkerSlot& slot = block.slots[plan_.rank];
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
        slot.kill_holding_lock.store(kLockKillArmed, std::memory_order_release);
        stage_ = Stage::kSeekingLock;
      }
      return;
    case Stage::kSeekingLock:  // the worker kills itself; outcome() reads whether it did
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

bool FaultInjector::landed(const HarnessBlock& block) const {
  if (plan_.kind != FaultKind::kKillHoldingLock) return injected_;
  return plan_.rank < block.procs &&
         block.slots[plan_.rank].kill_holding_lock.load(std::memory_order_acquire) == kLockKillFired;
}

std::string FaultInjector::outcome(const HarnessBlock& block) const {
  const int r = plan_.rank;
  if (r >= block.procs) return fmt::format("not injected: the cell has no rank {} ({} workers)", r, block.procs);
  const std::int64_t steps = block.slots[r].steps.load();
  if (!landed(block)) {
    if (plan_.kind == FaultKind::kKillHoldingLock && steps >= plan_.at_step) {
      return fmt::format("not injected: rank {} took no ProcessMutex from step {} on (the scenario may take "
                         "none, or not in that rank)",
                         r, plan_.at_step);
    }
    return fmt::format("not injected: rank {} ended at step {}, before step {}", r, steps, plan_.at_step);
  }
  switch (plan_.kind) {
    case FaultKind::kKill:
      return fmt::format("rank {} killed with SIGKILL at step {} (planned at {})", r, injected_at_step_,
                         plan_.at_step);
    case FaultKind::kKillHoldingLock:
      // It died at its step count (the slot outlives it).
      return fmt::format("rank {} killed with SIGKILL while holding a lock, at step {} (planned from {})", r, steps,
                         plan_.at_step);
    case FaultKind::kStall:
      return fmt::format("rank {} stopped with SIGSTOP at step {} for {} s (hang timeout {} s)", r,
                         injected_at_step_, plan_.stall_s, hang_timeout_s_);
    case FaultKind::kNone:
      break;
  }
  return "no fault";
}

Check FaultInjector::check(const HarnessBlock& block) const {
  const bool done = landed(block);
  const double step = plan_.kind == FaultKind::kKillHoldingLock && plan_.rank < block.procs
                          ? static_cast<double>(block.slots[plan_.rank].steps.load())
                          : static_cast<double>(injected_at_step_);
  return Check{checks::kFaultInjected, done ? Verdict::kPass : Verdict::kUnknown, step, outcome(block)};
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
    e.must_pass = {checks::kLiveness, checks::kFaultInjected, checks::kNoLeaks, checks::kNoSurvivors, checks::kShmReclaimed, checks::kChecker, checks::kSetup};
    return e;
  }
  const bool must_end_badly = plan.kind != FaultKind::kStall || plan.stall_s >= hang_timeout_s;
  if (must_end_badly) {
    e.must_fail = {checks::kLiveness};
    e.others_free = true;
    e.must_pass = {checks::kNoLeaks, checks::kFaultInjected, checks::kChecker, checks::kSetup};
  } else {
    e.must_pass = {checks::kFaultInjected};
  }
  return e;
}

}  // namespace sharebench
