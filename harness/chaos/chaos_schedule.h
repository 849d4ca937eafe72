// chaos_schedule: `--chaos SEED`, a seeded perturbation of each worker's schedule that makes rare
// interleavings common. At the harness's own synchronisation points (before a ProcessMutex is
// taken, while it is held, before it is released, before a barrier, at every beat) a worker may
// yield or sleep a short while; how likely and how long follows a priority that changes at random
// change points, as in PCT (a low-priority worker is held back more, so the others run ahead of
// it). Everything is drawn from the seed, the cell's id, the repetition and the rank alone, so the
// same command perturbs the same way (what a scheduler then does with it is the machine's).
//
// The budget: a worker's injected delays never exceed kChaosSlowdownBudget - 1 times the time it
// spent on its own work (plus kChaosGraceMs at the start), so a cell runs at most about
// kChaosSlowdownBudget times slower than without chaos.
#pragma once

#include <cstdint>
#include <string>

namespace sharebench {

struct CellConfig;
struct WorkerSlot;

inline constexpr double kChaosSlowdownBudget = 5;
inline constexpr double kChaosGraceMs = 50;

enum class ChaosSite : std::uint8_t { kBeforeLock, kHoldingLock, kBeforeUnlock, kBeforeBarrier, kBeat };

// What the chaos did in one worker, kept in its slot (the results show the sum per repetition).
struct ChaosTally {
  std::int64_t points = 0;    // synchronisation points reached
  std::int64_t yields = 0;    // sched_yield() injected
  std::int64_t sleeps = 0;    // sleeps injected
  std::int64_t slept_ns = 0;  // their total
  std::int64_t skipped = 0;   // perturbations the budget refused
  std::int64_t priority_changes = 0;
};

// The worker side, from run_worker: perturb this thread's synchronisation points for the cell's
// chaos seed (nothing when it is 0), counting into `tally`; stop_chaos() as work() returns.
void start_chaos(const CellConfig& cell, int rank, ChaosTally* tally);
void stop_chaos();

// Called by ProcessMutex, ProcessBarrier and WorkerContext::beat. Free when chaos is off (one
// thread-local load).
void chaos_point(ChaosSite site);

// The seed a cell repetition's plan is drawn from: the run's chaos seed, the cell's id, the
// repetition and the rank, mixed.
std::uint64_t chaos_stream_seed(std::uint64_t chaos_seed, const std::string& cell_id, int repetition, int rank);

}  // namespace sharebench
