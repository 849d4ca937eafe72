// Scenario `hogwild`: workers train shared parameters with no lock at all. Updates can
// be lost; what must hold is convergence within tolerance of a serial run of the same total
// steps. Lost updates and overlapping updates are counted and reported, not failed.
#include "scenarios/shared_training.h"

namespace sharebench {

namespace {
class HogwildScenario : public SharedTrainingScenario {
 public:
  explicit HogwildScenario(const CellConfig& c)
      : SharedTrainingScenario(c, LockPolicy::kNone,
                               c.variant == "forked-copy" ? Planted::kForkedCopy : Planted::kNothing) {}
};
}  // namespace

SHAREBENCH_SCENARIO(HogwildScenario, "hogwild")
    ->Describe("train shared parameters with no lock (Hogwild)")
    ->Kind(ScenarioKind::kTraining)
    ->OptOut(checks::kSanitizer, "Hogwild updates the shared parameters with no lock by design: ThreadSanitizer reports "
                          "that race (the report stays in the results)")
    ->Variant("lock-free", "every worker updates the shared parameters whenever it likes")
    ->KnownBug("forked-copy",
               "each worker trains a private copy, so no update reaches the shared model",
               Expectation{{checks::kUpdatesReachedModel, checks::kModelShared}, {checks::kConvergence}}, /*min_procs=*/1);

}  // namespace sharebench
