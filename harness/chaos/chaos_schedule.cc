// chaos_schedule: the per-thread perturbation plan and its budget.
#include "harness/chaos/chaos_schedule.h"

#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <memory>
#include <system_error>
#include <thread>

#include "harness/chaos/splitmix.h"
#include "harness/config/cell_config.h"
#include "harness/util/clock.h"

namespace sharebench {

namespace {

struct ChaosState {
  std::uint64_t rng = 0;
  ChaosTally* tally = nullptr;
  ChaosBudget* budget = nullptr;  // the repetition's, shared by its workers
  std::int64_t started_ns = 0;
  std::int64_t grace_ns = 0;  // kChaosGraceMs per worker of the repetition
  std::atomic<int> priority{1};    // 0 (held back most) .. 3 (held back least); the preempter reads it
  std::int64_t until_change = 0;   // points left before the next priority change point
  // The preemption pauses draw from a stream of their own: when a signal lands depends on the
  // machine, and must not shift what the synchronisation points draw.
  std::uint64_t preempt_rng = 0;
  ChaosPhases phases;               // the repetition's, the same in every worker
  bool at_start_barrier = false;    // the next barrier release is the start's: not perturbed
  std::int64_t joined_burst = -1;   // the last burst whose first rendezvous this worker went through
  std::int64_t joined_tick = -1;    // the last tick whose rendezvous it went through
  int procs = 1;
  std::unique_ptr<class Preempter> preempter;
  double uniform() { return static_cast<double>(splitmix64(rng) >> 11) * 0x1.0p-53; }
  std::int64_t between(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(splitmix64(rng) % static_cast<std::uint64_t>(hi - lo + 1));
  }
};

// Per thread: under the thread start method each rank runs on a thread of its own.
thread_local ChaosState* t_chaos = nullptr;

// Where this repetition's phases stand now (overlap_bursts.h). Async-signal-safe (the
// preemption handler calls it).
ChaosPhases::At phase_now(const ChaosState& c, std::int64_t now) {
  return c.phases.at(c.budget->epoch_ns.load(std::memory_order_acquire), now);
}

// How likely a perturbation is at each site. Holding a lock is where widening a window matters
// most (another worker then meets the lock held, re-initialised, or half-released).
double site_probability(ChaosSite site) {
  switch (site) {
    case ChaosSite::kHoldingLock: return 0.5;
    case ChaosSite::kBeforeLock:
    case ChaosSite::kBeforeBarrier:
    case ChaosSite::kAfterBarrier: return 0.35;
    case ChaosSite::kBeforeUnlock:
    case ChaosSite::kBeat:
    case ChaosSite::kPreempted: return 0.25;
  }
  return 0.25;
}

constexpr double kPriorityWeight[4] = {2.0, 1.0, 0.5, 0.25};

// Every injected pause goes through here: within the budget, counted, and kept in the ring.
// Async-signal-safe (the preemption handler calls it): no allocation, no lock.
// The budget's rule: `paused` so far and `ns` more within (budget - 1) x the rest of the wall time.
bool fits(const ChaosState& c, std::int64_t paused, std::int64_t ns, std::int64_t now) {
  const std::int64_t rest = now - c.started_ns - paused;
  return static_cast<double>(paused + ns) <=
         (kChaosSlowdownBudget - 1) * static_cast<double>(rest) + static_cast<double>(c.grace_ns);
}

// Takes `ns` from the repetition's budget when it fits (lock-free, so from the handler too).
bool within_budget(ChaosState& c, std::int64_t ns, std::int64_t now) {
  std::atomic<std::int64_t>& paused = c.budget->paused_ns;
  std::int64_t before = paused.load(std::memory_order_relaxed);
  for (;;) {
    if (!fits(c, before, ns, now)) return false;
    if (paused.compare_exchange_weak(before, before + ns, std::memory_order_relaxed)) return true;
  }
}

void remember(ChaosTally& t, ChaosSite site, std::int64_t now, std::int64_t pause_ns) {
  ChaosEvent& e = t.recent[t.recorded % ChaosTally::kRecent];
  e.at_ns = now;
  e.pause_us = static_cast<std::int32_t>(pause_ns / 1000);
  e.site = site;
  ++t.recorded;
}

void pause_for(std::int64_t ns) {
  timespec ts{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
  while (::clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) == EINTR) {
  }
}

// An injected pause of `ns` that started at `start`, charged as long as it really was: a sleep
// overshoots by the timer's slack and the wake-up (50 to 100 µs here, as long as a short pause
// itself), which the budget must count. Returns the time charged.
std::int64_t pause_and_charge(ChaosState& c, std::int64_t ns, std::int64_t start) {
  pause_for(ns);
  const std::int64_t actual = monotonic_ns() - start;
  if (actual > ns) c.budget->paused_ns.fetch_add(actual - ns, std::memory_order_relaxed);
  return std::max(actual, ns);
}

int preempt_signal() { return SIGRTMIN + 6; }

// The preempter's signal handler: pause this thread wherever it was, for 0.1 to 1 ms mostly, 1 to
// 3 ms now and then, 3 to 8 ms rarely (twice as long at the lowest priority): long enough that the
// others get a core meanwhile on a machine loaded by other work, short enough that the workers
// still overlap most of the time.
void on_preempt_signal(int) {
  const int saved_errno = errno;
  ChaosState* c = t_chaos;
  if (c) {
    const double kind = static_cast<double>(splitmix64(c->preempt_rng) >> 11) * 0x1.0p-53;
    const std::uint64_t spread = splitmix64(c->preempt_rng);
    std::int64_t ns = kind < 0.7   ? 100'000 + static_cast<std::int64_t>(spread % 900'000)
                      : kind < 0.95 ? 1'000'000 + static_cast<std::int64_t>(spread % 2'000'000)
                                    : 3'000'000 + static_cast<std::int64_t>(spread % 5'000'000);
    if (c->priority.load(std::memory_order_relaxed) == 0) ns *= 2;
    const std::int64_t now = monotonic_ns();
    ChaosTally& t = *c->tally;
    const ChaosPhases::At phase = phase_now(*c, now);
    ns = std::min(ns, phase.ends_in_ns);  // back by the next burst, with the others
    if (phase.burst || ns <= 0) {
      // A signal sent just before a burst began: left alone.
    } else if (within_budget(*c, ns, now)) {
      remember(t, ChaosSite::kPreempted, now, ns);
      ++t.preemptions;
      t.preempted_ns += pause_and_charge(*c, ns, now);
    } else {
      ++t.skipped;
    }
  }
  errno = saved_errno;
}

// The preempter (chaos_schedule.h says what and why): every 20 to 500 µs (seeded, by priority)
// it looks, and now and then signals the worker's thread when that has been computing. It charges
// its own CPU time to the budget, and while the budget has no room it looks only every 2 ms.
class Preempter {
 public:
  Preempter(std::uint64_t seed, const ChaosState* chaos) : rng_(seed), chaos_(chaos) {}
  bool start() {
    static const bool installed = [] {
      struct sigaction sa{};
      sa.sa_handler = &on_preempt_signal;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_RESTART;
      return ::sigaction(preempt_signal(), &sa, nullptr) == 0;
    }();
    if (!installed || ::pthread_getcpuclockid(::pthread_self(), &clock_) != 0) return false;
    pid_ = ::getpid();
    tid_ = static_cast<pid_t>(::syscall(SYS_gettid));
    try {
      thread_ = std::thread([this] { run(); });
    } catch (const std::system_error&) {
      return false;  // no thread to spare: the synchronisation points are still perturbed
    }
    return true;
  }
  ~Preempter() {
    stop_.store(true, std::memory_order_release);
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run() {
    std::int64_t cpu = clock_ns(clock_), wall = monotonic_ns();
    std::int64_t own_cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    while (!stop_.load(std::memory_order_acquire)) {
      const std::int64_t own_now = clock_ns(CLOCK_THREAD_CPUTIME_ID);
      chaos_->budget->paused_ns.fetch_add(own_now - own_cpu, std::memory_order_relaxed);
      own_cpu = own_now;
      std::int64_t ns = 20'000 + static_cast<std::int64_t>(splitmix64(rng_) % 480'000);
      const int priority = chaos_->priority.load(std::memory_order_relaxed);
      if (priority == 0) ns /= 2;
      if (priority == 3) ns *= 2;
      if (!room_for(100'000)) ns = 2'000'000;
      const ChaosPhases::At phase = phase_now(*chaos_, monotonic_ns());
      if (phase.burst) ns = std::min<std::int64_t>(phase.ends_in_ns, 2'000'000);  // it sleeps through bursts
      pause_for(ns);
      if (phase.burst) {
        cpu = clock_ns(clock_);
        wall = monotonic_ns();
        continue;
      }
      const std::int64_t cpu_now = clock_ns(clock_), wall_now = monotonic_ns();
      // Signalled now and then, not at every look: a worker paused most of the time would seldom
      // overlap the others, and an overlap is what a race needs.
      const double p = std::min(0.95, 2 * site_probability(ChaosSite::kPreempted) * kPriorityWeight[priority]);
      const bool now = static_cast<double>(splitmix64(rng_) >> 11) * 0x1.0p-53 < p;
      if (now && 10 * (cpu_now - cpu) >= wall_now - wall && !stop_.load(std::memory_order_acquire)) {
        ::syscall(SYS_tgkill, pid_, tid_, preempt_signal());
      }
      cpu = clock_ns(clock_);  // after the handler's pause, if it came: that time was not computing
      wall = monotonic_ns();
    }
  }

  // Whether the budget could take a pause of `ns` now (it takes nothing).
  bool room_for(std::int64_t ns) const {
    return fits(*chaos_, chaos_->budget->paused_ns.load(std::memory_order_relaxed), ns, monotonic_ns());
  }

  std::uint64_t rng_;
  const ChaosState* chaos_;
  clockid_t clock_{};
  pid_t pid_ = 0, tid_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

void start_chaos(const CellConfig& cell, int rank, ChaosTally* tally, ChaosBudget* budget) {
  stop_chaos();
  if (cell.chaos_seed == 0 || !tally || !budget) return;
  auto* c = new ChaosState();
  c->budget = budget;
  c->rng = chaos_stream_seed(cell.chaos_seed, cell.id(), cell.repetition, rank);
  c->tally = tally;
  c->procs = cell.procs;
  c->started_ns = monotonic_ns();
  c->grace_ns = static_cast<std::int64_t>(kChaosGraceMs * 1e6) * cell.procs;
  c->priority.store(static_cast<int>(c->between(0, 3)), std::memory_order_relaxed);
  c->until_change = c->between(16, 256);
  // The phases are the repetition's: drawn from a stream every rank shares (rank -1).
  c->phases = ChaosPhases::draw(chaos_stream_seed(cell.chaos_seed, cell.id(), cell.repetition, -1));
  c->preempt_rng = c->rng ^ 0x5851f42d4c957f2dULL;
  splitmix64(c->preempt_rng);
  t_chaos = c;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  std::uint64_t preempter_seed = c->rng ^ 0x2545f4914f6cdd1dULL;
  splitmix64(preempter_seed);
  auto preempter = std::make_unique<Preempter>(preempter_seed, c);
  if (preempter->start()) c->preempter = std::move(preempter);
}

void stop_chaos() {
  ChaosState* c = t_chaos;
  if (c) {
    c->budget->finished.fetch_add(1, std::memory_order_acq_rel);  // no rendezvous waits for it now
    c->preempter.reset();  // joined: no signal is sent after this
  }
  t_chaos = nullptr;  // and one still pending finds nothing to do
  std::atomic_signal_fence(std::memory_order_seq_cst);
  delete c;
}

namespace {

// Where a worker may wait for the others: not while it holds a lock they may need.
bool may_meet_at(ChaosSite site) {
  return site == ChaosSite::kBeat || site == ChaosSite::kBeforeLock || site == ChaosSite::kBeforeBarrier;
}

}  // namespace

void chaos_at_start_barrier() {
  if (ChaosState* c = t_chaos) c->at_start_barrier = true;
}

void chaos_point(ChaosSite site) {
  ChaosState* c = t_chaos;
  if (!c) return;
  ChaosTally& tally = *c->tally;
  ++tally.points;
  if (site == ChaosSite::kAfterBarrier && c->at_start_barrier) {
    // Released from the start barrier: the first one out starts the phases' clock.
    c->at_start_barrier = false;
    std::int64_t unset = 0;
    c->budget->epoch_ns.compare_exchange_strong(unset, monotonic_ns(), std::memory_order_acq_rel);
    ++tally.burst_points;
    return;
  }
  const std::int64_t now = monotonic_ns();
  const ChaosPhases::At phase = phase_now(*c, now);
  if (phase.burst) {
    ++tally.burst_points;
    const std::int64_t tick = (now - c->budget->epoch_ns.load(std::memory_order_relaxed)) / c->phases.tick_ns;
    if (may_meet_at(site) && tick != c->joined_tick) {
      c->joined_tick = tick;
      const bool first = phase.number != c->joined_burst;
      c->joined_burst = phase.number;
      const std::int64_t bound = std::min(first ? kFirstRendezvousNs : kRendezvousNs, phase.ends_in_ns);
      if (fits(*c, c->budget->paused_ns.load(std::memory_order_relaxed), bound, now)) {
        ++tally.rendezvous;
        const std::int64_t waited = meet_at_tick(c->budget->gate, c->budget->finished, c->procs, tick, bound);
        c->budget->paused_ns.fetch_add(waited, std::memory_order_relaxed);
      }
    }
    return;
  }
  if (--c->until_change <= 0) {  // a priority change point
    c->priority.store(static_cast<int>(c->between(0, 3)), std::memory_order_relaxed);
    c->until_change = c->between(16, 256);
    ++tally.priority_changes;
  }
  const double p = std::min(0.95, site_probability(site) * kPriorityWeight[c->priority.load(std::memory_order_relaxed)]);
  if (c->uniform() >= p) return;
  const double kind = c->uniform();
  if (kind < 0.45) {
    ++tally.yields;
    const std::int64_t start = monotonic_ns();
    remember(tally, site, start, 0);
    ::sched_yield();  // the core may go to another thread for a while: charged, not tallied
    c->budget->paused_ns.fetch_add(monotonic_ns() - start, std::memory_order_relaxed);
    return;
  }
  // A short sleep mostly, a long one now and then; a low-priority worker sleeps twice as long.
  std::int64_t ns = kind < 0.9 ? c->between(20'000, 400'000) : c->between(1'000'000, 4'000'000);
  if (c->priority.load(std::memory_order_relaxed) == 0) ns *= 2;
  ns = std::min(ns, phase.ends_in_ns);  // back by the next burst, with the others
  if (!within_budget(*c, ns, now)) {
    ++tally.skipped;
    return;
  }
  remember(tally, site, now, ns);
  ++tally.sleeps;
  tally.slept_ns += pause_and_charge(*c, ns, now);
}

}  // namespace sharebench
