// Scenario `locked`: workers train shared parameters and optimizer state under a process-shared
// lock. Must hold: no lost update, no two workers inside the lock.
#include "scenarios/shared_training.h"

namespace sharebench {

namespace {
LockPolicy policy_for(const std::string& variant) {
  if (variant == "update-only") return LockPolicy::kUpdateOnly;
  if (variant == "local-lock") return LockPolicy::kLocalLock;
  return LockPolicy::kWholeStep;
}

class LockedScenario : public SharedTrainingScenario {
 public:
  explicit LockedScenario(const CellConfig& c)
      : SharedTrainingScenario(c, policy_for(c.variant),
                               c.variant == "owner-death" ? Planted::kOwnerDeath : Planted::kNothing) {}
};
}  // namespace

SHAREBENCH_SCENARIO(LockedScenario, "locked")
    ->Describe("train shared parameters under a process-shared robust mutex")
    ->Kind(ScenarioKind::kTraining)
    ->Variant("whole-step", "the lock is held for forward, backward and update")
    ->LocksEveryStep()
    ->Variant("update-only", "gradients computed outside the lock; only the update is guarded")
    ->LocksEveryStep()
    ->KnownBug("local-lock",
               "each worker locks its own copy of the lock, excluding nobody",
               Expectation{{checks::kMutualExclusion}, {checks::kLostUpdates, checks::kConvergence}})
    ->MustFailUnderChaos({checks::kLostUpdates})  // the overlap a preemption inside the step makes certain
    ->KnownBug("owner-death",
               "a fault: the last worker dies holding the lock in its first step; the others must recover "
               "the lock and finish, with no hang",
               Expectation{{checks::kLiveness}, {checks::kLostUpdates, checks::kConvergence}});

}  // namespace sharebench
