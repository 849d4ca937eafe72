// FaultInjector: carries out a FaultPlan against one running cell repetition, from the runner's
// watchdog loop (it is polled there, so it adds no thread): when the target rank reaches its step,
// the plan's nemesis (nemesis.h) strikes it. It strikes one worker process only, and only while
// the watchdog has not reaped it (a reaped pid could be reused).
//
// Afterwards it says what it did as the `fault-injected` check (pass: injected as planned;
// unknown: the target ended, or took no lock, before the fault could land) and as the
// expectation the repetition is judged by:
//   kill, kill-holding-lock, stall longer than the hang timeout
//       `liveness` must fail; the scenario's own checks are free (a killed worker may leave the
//       shared state half-updated); `no-leaks`, `fault-injected`, `checker` and `setup` must pass.
//   stall shorter than the hang timeout
//       the cell must be clean: a paused worker is slow, not wrong, and must not be called hung.
#pragma once

#include <chrono>
#include <map>
#include <string>

#include "harness/config/fault_plan.h"
#include "harness/faults/nemesis.h"
#include "harness/launch/launcher.h"
#include "harness/results/results.h"
#include "harness/scenario/worker_slot.h"

namespace sharebench {

// The expectation a cell with this fault is judged by (above); `scenario_must_pass`: the checks its
// scenario says must pass under any fault (ScenarioInfo::MustPassUnderFault).
Expectation expectation_under_fault(const FaultPlan& plan, double hang_timeout_s,
                                    const std::vector<std::string>& scenario_must_pass = {});

class FaultInjector {
 public:
  FaultInjector(const FaultPlan& plan, double hang_timeout_s);

  // Called on every watchdog poll: injects when due, ends a stall when its time is up.
  // kill-holding-lock arms the worker's own trigger in its slot (process_mutex.h).
  void poll(WorkerGroup& group, HarnessBlock& block, const std::map<int, WorkerExit>& exited);
  // The watchdog is about to tear the group down: a stalled worker is let go first.
  void release(WorkerGroup& group, const std::map<int, WorkerExit>& exited);

  // One sentence: what was done, to whom, when; or why nothing was.
  std::string outcome(const HarnessBlock& block) const;
  Check check(const HarnessBlock& block) const;

 private:
  enum class Stage { kWaiting, kArmed, kHeld, kDone };
  using Clock = std::chrono::steady_clock;
  // Whether the fault landed: an armed one, when the worker's own trigger says it fired.
  bool landed(const HarnessBlock& block) const;
  // The step the verdict names: where an armed fault fired (the slot outlives the worker), else
  // where the strike was made.
  std::int64_t struck_step(const HarnessBlock& block) const;

  FaultPlan plan_;
  const Nemesis* nemesis_;
  double hang_timeout_s_;
  Stage stage_ = Stage::kWaiting;
  bool injected_ = false;
  bool armed_ = false;
  std::int64_t injected_at_step_ = 0;
  Clock::time_point hold_until_{};
  pid_t held_pid_ = 0;
};

}  // namespace sharebench
