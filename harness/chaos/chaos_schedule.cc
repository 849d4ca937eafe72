// chaos_schedule: the per-thread perturbation plan and its budget.
#include "harness/chaos/chaos_schedule.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "harness/scenario/cell_config.h"
#include "harness/util/clock.h"

namespace sharebench {

namespace {

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

struct ChaosState {
  std::uint64_t rng = 0;
  ChaosTally* tally = nullptr;
  std::int64_t started_ns = 0;
  int priority = 1;                // 0 (held back most) .. 3 (held back least)
  std::int64_t until_change = 0;   // points left before the next priority change point
  double uniform() { return static_cast<double>(splitmix64(rng) >> 11) * 0x1.0p-53; }
  std::int64_t between(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(splitmix64(rng) % static_cast<std::uint64_t>(hi - lo + 1));
  }
};

// Per thread: under the thread start method each rank runs on a thread of its own.
thread_local ChaosState* t_chaos = nullptr;

// How likely a perturbation is at each site. Holding a lock is where widening a window matters
// most (another worker then meets the lock held, re-initialised, or half-released).
double site_probability(ChaosSite site) {
  switch (site) {
    case ChaosSite::kHoldingLock: return 0.5;
    case ChaosSite::kBeforeLock:
    case ChaosSite::kBeforeBarrier: return 0.35;
    case ChaosSite::kBeforeUnlock:
    case ChaosSite::kBeat: return 0.25;
  }
  return 0.25;
}

constexpr double kPriorityWeight[4] = {2.0, 1.0, 0.5, 0.25};

}  // namespace

std::uint64_t chaos_stream_seed(std::uint64_t chaos_seed, const std::string& cell_id, int repetition, int rank) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a over the id, then mixed with the numbers
  for (const unsigned char c : cell_id) h = (h ^ c) * 0x100000001b3ULL;
  std::uint64_t s = chaos_seed ^ h;
  splitmix64(s);
  s ^= static_cast<std::uint64_t>(repetition) * 0xd1b54a32d192ed03ULL;
  splitmix64(s);
  s ^= static_cast<std::uint64_t>(rank) * 0x8cb92ba72f3d8dd7ULL;
  return splitmix64(s);
}

void start_chaos(const CellConfig& cell, int rank, ChaosTally* tally) {
  stop_chaos();
  if (cell.chaos_seed == 0 || !tally) return;
  auto* c = new ChaosState();
  c->rng = chaos_stream_seed(cell.chaos_seed, cell.id(), cell.repetition, rank);
  c->tally = tally;
  c->started_ns = monotonic_ns();
  c->priority = static_cast<int>(c->between(0, 3));
  c->until_change = c->between(16, 256);
  t_chaos = c;
}

void stop_chaos() {
  delete t_chaos;
  t_chaos = nullptr;
}

void chaos_point(ChaosSite site) {
  ChaosState* c = t_chaos;
  if (!c) return;
  ChaosTally& tally = *c->tally;
  ++tally.points;
  if (--c->until_change <= 0) {  // a priority change point
    c->priority = static_cast<int>(c->between(0, 3));
    c->until_change = c->between(16, 256);
    ++tally.priority_changes;
  }
  const double p = std::min(0.95, site_probability(site) * kPriorityWeight[c->priority]);
  if (c->uniform() >= p) return;
  const double kind = c->uniform();
  if (kind < 0.45) {
    ++tally.yields;
    ::sched_yield();
    return;
  }
  // A short sleep mostly, a long one now and then; a low-priority worker sleeps twice as long.
  std::int64_t ns = kind < 0.9 ? c->between(20'000, 400'000) : c->between(1'000'000, 4'000'000);
  if (c->priority == 0) ns *= 2;
  const std::int64_t now = monotonic_ns();
  const std::int64_t worked = now - c->started_ns - tally.slept_ns;
  const double allowed = (kChaosSlowdownBudget - 1) * static_cast<double>(worked) + kChaosGraceMs * 1e6;
  if (static_cast<double>(tally.slept_ns + ns) > allowed) {
    ++tally.skipped;
    return;
  }
  ++tally.sleeps;
  tally.slept_ns += ns;
  std::this_thread::sleep_for(std::chrono::nanoseconds(ns));
}

}  // namespace sharebench
