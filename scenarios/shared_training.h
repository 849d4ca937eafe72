// SharedTrainingScenario: N workers train one model whose parameters (and SGD momentum buffers)
// live in the arena. What differs between strategies is only how a step is guarded:
//   kWholeStep   a process-shared lock around forward, backward and update (seed 000 ex. 2)
//   kUpdateOnly  the same lock around the update alone: gradients may be computed from weights
//                another worker is about to change, but no update is lost
//   kNone        no lock at all: Hogwild (seed 001)
//   kLocalLock   the seed 000 mistake: the whole step under a lock each worker holds its own
//                copy of (a threading.Lock passed to processes), which excludes nobody
// Detectors, next to what they guard:
//   - occupancy: an atomic counter incremented on entering the guarded section and decremented
//     on leaving; a worker that enters and finds it non-zero has proven two workers inside at
//     once. It catches a non-excluding lock in every run with two workers, lost update or not.
//   - canary: 64 doubles read at the start of the guarded section and written back +1 at its
//     end (the same read-modify-write shape as the parameters, spanning the section); total steps
//     minus the canary is the number of lost updates.
//   - updates-reached-model: the shared parameters' checksum moved from the published one.
//   - convergence: held-out loss against the serial reference of the same total steps.
//   - owner-death-recovered (owner-death only): a survivor recovered the dead owner's lock.
#pragma once

#include <atomic>
#include <cstdint>

#include "harness/scenario/scenario.h"
#include "harness/sync/process_mutex.h"

namespace sharebench {

enum class LockPolicy { kWholeStep, kUpdateOnly, kNone, kLocalLock };

// Faults and mistakes planted on top of a policy.
enum class Planted {
  kNothing,
  kOwnerDeath,  // the last rank dies holding the lock in its first step (crash/owner-death)
  kForkedCopy,  // workers train a private copy of the model: no update reaches the shared one
                // (seed 002 example 1: gradients computed on a copy-on-write copy after fork)
};

// Convergence tolerance: a run passes when its held-out loss is at most
// serial × (1 + kConvergenceRelTol) + kConvergenceAbsTol. Measured spread: docs/scenarios.md.
inline constexpr double kConvergenceRelTol = 0.15;
inline constexpr double kConvergenceAbsTol = 0.05;
inline constexpr int kCanaryElements = 64;

// The guarded section's instrumentation: occupancy on entry and exit, canary read and write.
// The canary is read and written with plain loads and stores (not tensor ops), so a race on it is
// visible to ThreadSanitizer in thread mode, like the parameter update itself (apply_sgd).
class GuardedSection {
 public:
  GuardedSection(std::atomic<std::int32_t>& occupancy, double* canary, std::int64_t& overlaps)
      : occupancy_(occupancy), canary_(canary) {
    if (occupancy_.fetch_add(1, std::memory_order_acq_rel) != 0) ++overlaps;
    for (int i = 0; i < kCanaryElements; ++i) snapshot_[i] = canary_[i];
  }
  ~GuardedSection() {
    for (int i = 0; i < kCanaryElements; ++i) canary_[i] = snapshot_[i] + 1;
    occupancy_.fetch_sub(1, std::memory_order_acq_rel);
  }

 private:
  std::atomic<std::int32_t>& occupancy_;
  double* canary_;
  double snapshot_[kCanaryElements];
};

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
    std::atomic<std::int32_t> occupancy{0};
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
