// kill-holding-lock: the victim dies while it holds a ProcessMutex. Armed through its slot, the
// worker kills itself at its next acquisition (harness/sync/process_mutex.h), so it dies holding
// the lock whatever the schedule: the survivors must recover the lock (a robust mutex) or the run
// must end. A rank's fault only: a program's process takes no ProcessMutex.
#include <stdexcept>

#include <fmt/format.h>

#include "harness/faults/nemesis.h"

namespace sharebench {
namespace {

class KillHoldingLockNemesis final : public Nemesis {
 public:
  std::string_view name() const override { return "kill-holding-lock"; }
  void validate(const FaultPlan& plan, std::string_view spec) const override {
    if (plan.targets_tree()) {
      throw std::invalid_argument(fmt::format("fault '{}': kill-holding-lock targets a rank, not a program's child", spec));
    }
    if (plan.hold_s > 0) throw std::invalid_argument(fmt::format("fault '{}': only a stall takes +SECONDS", spec));
  }
  Strike strike(const FaultPlan& /*plan*/, const FaultVictim& victim) const override {
    victim.slot->kill_holding_lock.store(kLockKillArmed, std::memory_order_release);
    return Strike::kArmed;
  }
  bool fired(const WorkerSlot& slot) const override {
    return slot.kill_holding_lock.load(std::memory_order_acquire) == kLockKillFired;
  }
  bool kills() const override { return true; }
  bool ends_the_run(const FaultPlan&, double) const override { return true; }
  std::string describe_rank(const FaultPlan& plan, int rank, std::int64_t step, double) const override {
    // It died at its step count (the slot outlives it).
    return fmt::format("rank {} killed with SIGKILL while holding a lock, at step {} (planned from {})", rank, step,
                       plan.at_step);
  }
  std::string describe_process(const FaultPlan&, const std::string& who, double after_s) const override {
    return fmt::format("{} killed with SIGKILL {:.2f} s after its birth", who, after_s);
  }
  std::string describe_missed(const FaultPlan& plan, int rank, std::int64_t steps) const override {
    if (steps < plan.at_step) return Nemesis::describe_missed(plan, rank, steps);
    return fmt::format("not injected: rank {} took no ProcessMutex from step {} on (the scenario may take none, or "
                       "not in that rank)",
                       rank, plan.at_step);
  }
  std::vector<DrawShare> draw_shares() const override { return {{15, 0}}; }
  bool needs_lock_every_step() const override { return true; }
  std::string_view draw_fallback() const override { return "kill"; }
};

}  // namespace

std::unique_ptr<Nemesis> make_kill_holding_lock_nemesis() { return std::make_unique<KillHoldingLockNemesis>(); }

}  // namespace sharebench
