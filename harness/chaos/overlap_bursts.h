// overlap_bursts: the part of --chaos that keeps workers running at once. A data race with a window
// of one instruction (`tally += 1`, a copy of a few words) needs two workers running at the same
// moment, and pauses serialise them: chaos that only paused would hide such races (measured: a
// plain `+= 1` at 2 000 steps caught 1 to 4 times in 10 with the pauses alone, 8 to 10 without
// chaos). So time after the start barrier alternates between bursts, where nothing is perturbed
// and the preempters sleep, and shakes, where chaos_schedule's perturbation applies. The phases are
// drawn from the seed once per repetition, the same for every worker, on one clock whose origin is
// the moment the first worker leaves the start barrier: the workers are released together into the
// first burst (1 to 5 ms, long enough to hold a short cell's whole work, so a short cell runs as it
// would without chaos), and every pause injected during a shake ends by the shake's end, so all of
// them come back together as the next burst begins.
//
// Inside a burst the workers are released together again and again: the burst's clock ticks every
// 10 to 50 µs (seeded), and at its first beat (or lock or barrier about to be waited on) after a
// tick each worker waits for the others to reach theirs (meet_at_tick), spinning, then yielding its
// core: at most 2 ms at a burst's first tick, 300 µs at the others, never past the burst, and only
// while the budget has room. All leave within a fraction of a microsecond of the last arrival and
// run their next step at once, which is when a one-instruction window meets another worker's.
// (Released from a barrier, a worker may still not run until another has finished its short work
// on a busy machine; the rendezvous makes them all be running at once.)
#pragma once

#include <atomic>
#include <cstdint>

namespace sharebench {

inline constexpr std::int64_t kFirstRendezvousNs = 2'000'000;  // at a burst's first tick
inline constexpr std::int64_t kRendezvousNs = 300'000;         // at the others

// The shared phases of a repetition: bursts (nothing perturbed) and shakes, alternating, the
// first a burst. Pure: the same seed and time give the same phase in every worker.
// Async-signal-safe (the preemption handler asks where it is).
struct ChaosPhases {
  static constexpr int kCount = 64;  // then the plan repeats
  std::int64_t end_ns[kCount] = {};  // each phase's end, from the epoch
  std::int64_t period_ns = 0;
  std::int64_t tick_ns = 0;  // a burst's rendezvous period
  static ChaosPhases draw(std::uint64_t seed);
  struct At {
    bool burst;
    std::int64_t ends_in_ns;  // time left in this phase
    std::int64_t number;      // the phase's number since the epoch (bursts are the even ones)
  };
  At at(std::int64_t since_epoch_ns) const;
  // At `now_ns` for a clock started at `epoch_ns`; before the epoch (0: not started, or a scenario
  // that never waits at the start barrier) a shake with no end, as chaos was before bursts.
  At at(std::int64_t epoch_ns, std::int64_t now_ns) const;
};

// A tick's rendezvous on `gate` ((tick << 16) | workers arrived, in the repetition's shared
// memory): arrive at tick `tick` and wait until every worker still working (`procs` less
// `finished`) has arrived, `bound_ns` has passed, or a later tick's gate opened. Spins first (all
// leave within a fraction of a microsecond of the last arrival), then yields the core to whoever
// has not arrived. Returns the time it waited.
std::int64_t meet_at_tick(std::atomic<std::int64_t>& gate, const std::atomic<std::int32_t>& finished, int procs,
                          std::int64_t tick, std::int64_t bound_ns);

}  // namespace sharebench
