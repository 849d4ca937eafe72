// chaos_schedule: `--chaos SEED`, a seeded perturbation of each worker's schedule that makes rare
// interleavings common. At the harness's own synchronisation points (before a ProcessMutex is
// taken, while it is held, before it is released, before a barrier, at every beat) a worker may
// yield or sleep a short while; how likely and how long follows a priority that changes at random
// change points, as in PCT (a low-priority worker is held back more, so the others run ahead of
// it). Everything is drawn from the seed, the cell's id, the repetition and the rank alone, so the
// same command perturbs the same way (what a scheduler then does with it is the machine's).
//
// Preemption at arbitrary points: a preempter thread beside each worker looks every 20 to 500 µs
// and, now and then, when the worker's thread has been computing since the last look, signals that
// thread alone (tgkill); the handler pauses it where it stands, inside a user's read-modify-write or
// half-way through a copy, for a seeded while (the effect of a SIGSTOP/SIGCONT pair, aimed at one
// thread and at moments when it computes), and the others run meanwhile. A thread blocked in the
// kernel is never signalled. (A CPU-time timer would be simpler, but the kernel checks those only
// at its tick, 1 to 4 ms: fewer times than a short worker's whole work.)
//
// Overlap bursts (overlap_bursts.h) alternate with the perturbation above: pausing alone would
// serialise the workers and hide a race that needs two of them running at once.
//
// The budget is the cell's, shared by its workers: what the chaos costs all of them (P: the sleeps
// and pauses injected, charged as long as they really lasted, yields, the preempters' own CPU
// time) never exceeds kChaosSlowdownBudget - 1 times the elapsed wall time less P (plus
// kChaosGraceMs per worker at the start). A delay lengthens a cell by at most its own length, so the wall
// time W <= W0 + P (W0: without chaos), W - P <= W0, P <= (budget - 1) W0, and W <= budget x W0.
// A per-worker budget would not bound it: a worker blocked on a paused peer counts its wait as
// work and earns pauses of its own (measured: up to 18x on the default matrix).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "harness/chaos/overlap_bursts.h"

namespace sharebench {

struct CellConfig;
struct WorkerSlot;

inline constexpr double kChaosSlowdownBudget = 5;
inline constexpr double kChaosGraceMs = 50;

enum class ChaosSite : std::uint8_t {
  kBeforeLock,
  kHoldingLock,
  kBeforeUnlock,
  kBeforeBarrier,
  kAfterBarrier,  // released from a barrier (the start barrier too): who leaves first is shaken
  kBeat,
  kPreempted,     // the preempter: anywhere in the worker's own code
};
const char* to_string(ChaosSite site);

// One perturbation, kept in a small ring per worker: what preceded a failure (the HTML report).
struct ChaosEvent {
  std::int64_t at_ns = 0;  // monotonic
  std::int32_t pause_us = 0;  // 0: a yield
  ChaosSite site = ChaosSite::kBeat;
};

// What the chaos did in one worker, kept in its slot (the results show the sum per repetition).
struct ChaosTally {
  std::int64_t points = 0;    // synchronisation points reached
  std::int64_t burst_points = 0;  // of those, reached during an overlap burst (left alone)
  std::int64_t rendezvous = 0;    // rendezvous it went through in bursts
  std::int64_t yields = 0;    // sched_yield() injected
  std::int64_t sleeps = 0;    // sleeps injected
  std::int64_t slept_ns = 0;  // their total
  std::int64_t skipped = 0;   // perturbations the budget refused
  std::int64_t priority_changes = 0;
  std::int64_t preemptions = 0;    // pauses by the preempter
  std::int64_t preempted_ns = 0;   // their total
  static constexpr int kRecent = 12;
  ChaosEvent recent[kRecent];      // the last perturbations, oldest overwritten first
  std::int64_t recorded = 0;       // perturbations recorded in all (recent holds the last kRecent)
};

// "t+12.4 ms rank 1 preempted 1.2 ms (in its own code); t+12.9 ms holding a lock: sleep 240 µs; ...",
// the last perturbations oldest first, times from `start_ns`; "" when there were none.
std::string describe_recent_chaos(const ChaosTally& tally, std::int64_t start_ns);

// The budget all the workers of a repetition share, in its shared memory (HarnessBlock).
struct ChaosBudget {
  std::atomic<std::int64_t> paused_ns{0};  // every worker's injected sleeps and pauses
  std::atomic<std::int64_t> epoch_ns{0};   // when the first worker left the start barrier (0: not yet)
  // A burst's rendezvous: (tick number << 16) | workers arrived at it.
  std::atomic<std::int64_t> gate{0};
  std::atomic<std::int32_t> finished{0};   // workers whose work() returned: never arriving again
};

// The worker side, from run_worker: perturb this thread's synchronisation points for the cell's
// chaos seed (nothing when it is 0), counting into `tally` and drawing on the repetition's
// `budget`; stop_chaos() as work() returns.
void start_chaos(const CellConfig& cell, int rank, ChaosTally* tally, ChaosBudget* budget);
void stop_chaos();

// Called by ProcessMutex, ProcessBarrier and WorkerContext::beat. Free when chaos is off (one
// thread-local load).
void chaos_point(ChaosSite site);
// WorkerContext::wait_for_start, before its barrier: the barrier's release starts the phases (the
// first worker out sets the epoch) and is not perturbed, so the workers leave it together.
void chaos_at_start_barrier();

// The seed a cell repetition's plan is drawn from: the run's chaos seed, the cell's id, the
// repetition and the rank, mixed.
std::uint64_t chaos_stream_seed(std::uint64_t chaos_seed, const std::string& cell_id, int repetition, int rank);

}  // namespace sharebench
