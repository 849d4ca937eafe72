// SharedTrainingScenario: N workers train one model whose parameters (and SGD momentum buffers)
// live in the arena. What differs between strategies is only how a step is guarded:
//   kWholeStep   a process-shared lock around forward, backward and update
//   kUpdateOnly  the same lock around the update alone: gradients may be computed from weights
//                another worker is about to change, but no update is lost
//   kNone        no lock at all: Hogwild
//   kLocalLock   the classic mistake: the whole step under a lock each worker holds its own
//                copy of (a threading.Lock passed to processes), which excludes nobody
// Checks, all from the installed checkers (harness/checkers, torch_support/parameter_checks.h):
//   - mutual-exclusion and lost-updates: a GuardedSection (occupancy, lost-update canary) around
//     what the lock guards; hogwild records the lost-update rate without judging it.
//   - updates-reached-model: the shared parameters' checksum moved from the published one.
//   - convergence: held-out loss against the serial reference of the same total steps.
//   - owner-death-recovered (owner-death, or a kill-holding-lock fault): a survivor recovered the
//     dead owner's lock, or, when every survivor had taken it for the last time before the death,
//     the checker did; and every survivor finished.
#pragma once

#include <atomic>
#include <cstdint>

#include "harness/checkers/guarded_section.h"
#include "harness/checkers/value_checks.h"
#include "harness/scenario/scenario.h"
#include "harness/sync/process_mutex.h"

namespace sharebench {

enum class LockPolicy { kWholeStep, kUpdateOnly, kNone, kLocalLock };

// Faults and mistakes planted on top of a policy.
enum class Planted {
  kNothing,
  kOwnerDeath,  // the last rank dies holding the lock in its first step (crash/owner-death)
  kForkedCopy,  // workers train a private copy of the model: no update reaches the shared one
                // (gradients computed on a copy-on-write copy after fork)
};

// Convergence tolerance: a run passes when its held-out loss is at most
// serial × (1 + relative) + absolute. Measured spread: docs/scenarios.md.
inline constexpr ConvergenceTolerance kConvergenceTolerance{};  // value_checks.h: 0.15 and 0.05

class SharedTrainingScenario : public Scenario {
 public:
  SharedTrainingScenario(const CellConfig& cell, LockPolicy policy, Planted planted = Planted::kNothing)
      : cell_(cell), policy_(policy), planted_(planted) {}
  void setup(SetupContext& ctx) override;
  void work(WorkerContext& ctx) override;
  void check(CheckContext& ctx) override;

 private:
  struct SharedState {
    ProcessMutex mutex{"model-lock"};
    SectionMonitor section;  // occupancy and the lost-update canary (harness/checkers)
    std::uint64_t initial_checksum = 0;  // of the published parameters
    std::atomic<std::int64_t> recovered_by{-1};  // rank that recovered a dead owner's lock
    std::atomic<std::int32_t> owner_dying{0};    // owner-death: the victim holds the lock and dies
  };
  bool uses_lock() const { return policy_ != LockPolicy::kNone; }
  [[noreturn]] void die_holding_the_lock() const;

  CellConfig cell_;
  LockPolicy policy_;
  Planted planted_;
};

}  // namespace sharebench
