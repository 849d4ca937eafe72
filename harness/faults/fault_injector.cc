// FaultInjector: signals, timing and the verdict of one injected fault.
#include "harness/faults/fault_injector.h"

#include <signal.h>
#include <sys/types.h>

#include <string>

#include <fmt/format.h>

namespace sharebench {

FaultInjector::FaultInjector(const FaultPlan& plan, double hang_timeout_s)
    : plan_(plan), nemesis_(&nemesis_of(plan)), hang_timeout_s_(hang_timeout_s) {}

void FaultInjector::poll(WorkerGroup& group, HarnessBlock& block, const std::map<int, WorkerExit>& exited) {
  if (stage_ == Stage::kDone || plan_.rank >= block.procs || exited.count(plan_.rank)) {
    if (stage_ != Stage::kHeld) stage_ = Stage::kDone;
    return;
  }
  const auto pids = group.pids();
  const pid_t pid = pids.at(static_cast<std::size_t>(plan_.rank));
  if (pid <= 0) return;
  WorkerSlot& slot = block.slots[plan_.rank];
  const std::int64_t steps = slot.steps.load(std::memory_order_acquire);
  switch (stage_) {
    case Stage::kWaiting: {
      if (steps < plan_.at_step) return;
      injected_at_step_ = steps;
      const Strike strike = nemesis_->strike(plan_, FaultVictim{pid, &slot});
      if (strike == Strike::kArmed) {
        armed_ = true;
        stage_ = Stage::kArmed;
        return;
      }
      injected_ = true;
      if (strike == Strike::kHeld) {
        held_pid_ = pid;
        hold_until_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(plan_.hold_s));
        stage_ = Stage::kHeld;
      } else {
        stage_ = Stage::kDone;
      }
      return;
    }
    case Stage::kArmed:  // the worker strikes itself; landed() reads whether it did
      return;
    case Stage::kHeld:
      if (Clock::now() >= hold_until_) release(group, exited);
      return;
    case Stage::kDone:
      return;
  }
}

void FaultInjector::release(WorkerGroup& /*group*/, const std::map<int, WorkerExit>& exited) {
  if (stage_ == Stage::kHeld && held_pid_ > 0 && !exited.count(plan_.rank)) nemesis_->release(held_pid_);
  if (stage_ == Stage::kHeld || stage_ == Stage::kArmed) stage_ = Stage::kDone;
  held_pid_ = 0;
}

bool FaultInjector::landed(const HarnessBlock& block) const {
  if (!armed_) return injected_;
  return plan_.rank < block.procs && nemesis_->fired(block.slots[plan_.rank]);
}

std::int64_t FaultInjector::struck_step(const HarnessBlock& block) const {
  if (armed_ && plan_.rank < block.procs) return block.slots[plan_.rank].steps.load();
  return injected_at_step_;
}

std::string FaultInjector::outcome(const HarnessBlock& block) const {
  const int r = plan_.rank;
  if (r >= block.procs) return fmt::format("not injected: the cell has no rank {} ({} workers)", r, block.procs);
  if (!landed(block)) return nemesis_->describe_missed(plan_, r, block.slots[r].steps.load());
  return nemesis_->describe_rank(plan_, r, struck_step(block), hang_timeout_s_);
}

Check FaultInjector::check(const HarnessBlock& block) const {
  return Check{checks::kFaultInjected, landed(block) ? Verdict::kPass : Verdict::kUnknown,
               static_cast<double>(struck_step(block)), outcome(block)};
}

Expectation expectation_under_fault(const FaultPlan& plan, double hang_timeout_s,
                                    const std::vector<std::string>& scenario_must_pass) {
  Expectation e;
  if (!plan.active()) return e;
  if (plan.targets_tree()) {
    // A child of an exec'd program killed or stalled: the program must still end, however it
    // chooses (an error exit is the right answer to a dead worker), not hang; the harness must
    // inject the fault and leave nothing behind.
    e.others_free = true;
    // Nor may it leave anything behind: the scenario names its own checks of that (a process, a
    // /dev/shm segment).
    e.must_pass = {checks::kLiveness, checks::kFaultInjected, checks::kNoLeaks, checks::kChecker, checks::kSetup};
    e.must_pass.insert(e.must_pass.end(), scenario_must_pass.begin(), scenario_must_pass.end());
    return e;
  }
  if (nemesis_of(plan).ends_the_run(plan, hang_timeout_s)) {
    e.must_fail = {checks::kLiveness};
    e.others_free = true;
    e.must_pass = {checks::kNoLeaks, checks::kFaultInjected, checks::kChecker, checks::kSetup};
  } else {
    e.must_pass = {checks::kFaultInjected};
  }
  return e;
}

}  // namespace sharebench
