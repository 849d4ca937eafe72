// Watchdog: heartbeat supervision of one cell repetition.
#include "harness/watchdog/watchdog.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/runner/interrupt.h"
#include "harness/watchdog/process_probe.h"

namespace sharebench {

namespace {
using Clock = std::chrono::steady_clock;
constexpr auto kPollInterval = std::chrono::milliseconds(20);
// After a kill, how long to wait for exits before giving up on a process (it is then unkillable:
// in uninterruptible sleep). Nothing the harness can do beyond that; it is reported.
constexpr auto kReapGrace = std::chrono::seconds(10);
// How often each worker's memory is sampled: often enough for a short cell to have a few samples,
// rarely enough that reading smaps_rollup (tens of µs) costs nothing beside the run.
constexpr auto kMemoryInterval = std::chrono::milliseconds(100);
// gdb takes 2–3 s per LibTorch process (more on a loaded machine): 64 stuck workers would keep a
// hang's teardown busy for minutes. The ranks the hang names come first.
constexpr int kMaxGdbProcesses = 8;

std::string phase_name(std::int32_t p) {
  switch (static_cast<WorkerPhase>(p)) {
    case WorkerPhase::kLaunched: return "launching";
    case WorkerPhase::kAttached: return "waiting at the start barrier";
    case WorkerPhase::kRunning: return "running";
    case WorkerPhase::kDone: return "done, exiting";
    case WorkerPhase::kFailed: return "failed, exiting";
  }
  return "?";
}

std::string describe_exit(const WorkerExit& e) {
  if (e.exited) return fmt::format("exit code {}", e.exit_code);
  if (e.signal) return fmt::format("signal {} ({})", e.signal, ::strsignal(e.signal));
  return "lost";
}
}  // namespace

Supervision supervise(WorkerGroup& group, HarnessBlock& block, const WatchdogLimits& limits,
                      const std::function<void()>& before_teardown, FaultInjector* faults,
                      const std::function<void(double quiet_s)>& on_tick) {
  Supervision sup;
  const auto start = Clock::now();
  const auto hang_after = std::chrono::duration<double>(limits.hang_timeout_s);
  const auto deadline_after = std::chrono::duration<double>(limits.deadline_s);
  const int procs = block.procs;
  std::vector<std::uint64_t> last_beat(procs, 0);
  std::vector<std::int32_t> last_phase(procs, -1);
  std::vector<Clock::time_point> last_progress(procs, start);
  auto launch_progress = start;
  auto next_memory_sample = start;
  std::vector<long long> launch_cpu(procs, -1);  // CPU ticks each launching worker had used
  std::vector<int> failed_ranks;
  std::vector<int> stalled;  // the ranks a hang names

  // Under the thread start method a rank whose thread returned cannot hang, though its exit is only
  // seen when the whole host ends. A worker process that finished its work and then hangs on its
  // way out (an exit handler, a static destructor) is still a hang.
  const bool threads = group.ranks_share_a_process();
  auto finished = [&](int r) {
    const auto phase = static_cast<WorkerPhase>(block.slots[r].phase.load(std::memory_order_acquire));
    return threads && (phase == WorkerPhase::kDone || phase == WorkerPhase::kFailed);
  };
  auto absorb = [&](const std::vector<WorkerExit>& exits) {
    for (const WorkerExit& e : exits) {
      sup.exits[e.rank] = e;
      if (!e.clean()) {
        failed_ranks.push_back(e.rank);
        block.failed_workers.fetch_add(1, std::memory_order_release);
        block.start_barrier.abort();
      }
    }
  };

  while (group.running() > 0) {
    absorb(group.wait_exits(kPollInterval));
    if (group.running() == 0) break;
    if (faults) faults->poll(group, block, sup.exits);
    const auto now = Clock::now();
    if (interrupt_requested()) {
      sup.status = RunStatus::kInterrupted;
      sup.message = fmt::format("interrupted by signal {}", interrupt_signal());
      break;
    }
    const bool launching = block.start_barrier.generation() == 0 && !block.start_barrier.aborted();
    stalled.clear();
    for (int r = 0; r < procs; ++r) {
      if (sup.exits.count(r)) continue;
      const WorkerSlot& s = block.slots[r];
      const std::uint64_t beat = s.heartbeat.load(std::memory_order_acquire);
      const std::int32_t phase = s.phase.load(std::memory_order_acquire);
      if (beat != last_beat[r] || phase != last_phase[r]) {
        last_beat[r] = beat;
        last_phase[r] = phase;
        last_progress[r] = now;
        if (launching) launch_progress = now;
      }
    }
    if (launching && !threads && now >= next_memory_sample) {
      // A launching worker that uses CPU (loading LibTorch, say) is making progress. Under threads
      // every rank shares the host's CPU time, the runner's included: not a signal.
      const auto pids = group.pids();
      for (int r = 0; r < procs && static_cast<std::size_t>(r) < pids.size(); ++r) {
        if (sup.exits.count(r) || pids[r] <= 0 ||
            block.slots[r].phase.load(std::memory_order_acquire) != static_cast<std::int32_t>(WorkerPhase::kLaunched)) {
          continue;
        }
        const long long ticks = cpu_ticks(pids[r]);
        if (ticks > launch_cpu[r]) {
          if (launch_cpu[r] >= 0) launch_progress = now;
          launch_cpu[r] = ticks;
        }
      }
    }
    double quiet_s = 0;
    for (int r = 0; r < procs; ++r) {
      if (sup.exits.count(r) || finished(r)) continue;
      const auto since = launching ? launch_progress : last_progress[r];
      quiet_s = std::max(quiet_s, std::chrono::duration<double>(now - since).count());
      if (now - since > hang_after) stalled.push_back(r);
    }
    if (on_tick) on_tick(quiet_s);
    if (now >= next_memory_sample) {
      next_memory_sample = now + kMemoryInterval;
      const auto pids = group.pids();
      for (int r = 0; r < procs && !threads; ++r) {
        if (sup.exits.count(r) || static_cast<std::size_t>(r) >= pids.size() || pids[r] <= 0) continue;
        if (auto m = sample_memory(pids[r])) {
          const auto phase = static_cast<WorkerPhase>(block.slots[r].phase.load(std::memory_order_acquire));
          sup.memory[r].add(*m, static_cast<double>(block.slots[r].steps.load(std::memory_order_relaxed)),
                            std::chrono::duration<double>(now - start).count(), phase == WorkerPhase::kRunning);
        }
      }
    }
    if (!stalled.empty()) {
      sup.status = RunStatus::kHang;
      sup.message = fmt::format("no progress for {:.1f} s from rank(s) {}{}", limits.hang_timeout_s,
                                fmt::join(stalled, ", "), launching ? " while workers were still launching" : "");
      break;
    }
    if (launching && limits.launch_deadline_s > 0 && now - start > std::chrono::duration<double>(limits.launch_deadline_s)) {
      for (int r = 0; r < procs; ++r) {
        if (!sup.exits.count(r) && block.slots[r].phase.load() == static_cast<std::int32_t>(WorkerPhase::kLaunched)) {
          stalled.push_back(r);
        }
      }
      sup.status = RunStatus::kHang;
      sup.message = fmt::format("rank(s) {} still launching after the launch deadline of {:.0f} s",
                                fmt::join(stalled, ", "), limits.launch_deadline_s);
      break;
    }
    if (now - start > deadline_after) {
      sup.status = RunStatus::kDeadline;
      sup.message = fmt::format("cell ran past its {:.0f} s deadline", limits.deadline_s);
      break;
    }
  }

  if (faults) faults->release(group, sup.exits);
  if (group.running() > 0) {
    // Record where every worker still alive is before tearing it down.
    const auto pids = group.pids();
    for (int r = 0; r < procs; ++r) {
      if (sup.exits.count(r) || finished(r)) continue;
      const WorkerSlot& s = block.slots[r];
      // Under the thread start method every rank shares the host: describe the rank's own thread.
      const pid_t tid = threads ? s.tid.load() : 0;
      sup.stalls[r] = fmt::format("{} at step {}; {}", phase_name(s.phase.load()), s.steps.load(),
                                  describe_process(pids.at(static_cast<std::size_t>(r)), tid));
    }
    // Frozen before the (slow) stacks are taken, so they show the stuck state.
    group.send_all(SIGSTOP);
    if (limits.gdb_stacks && sup.status != RunStatus::kInterrupted) {
      std::vector<int> order = stalled;
      for (int r = 0; r < procs; ++r) {
        if (std::find(order.begin(), order.end(), r) == order.end()) order.push_back(r);
      }
      std::map<pid_t, std::string> by_pid;  // thread mode: every rank shares one process
      for (int r : order) {
        if (sup.exits.count(r)) continue;
        const pid_t pid = pids.at(static_cast<std::size_t>(r));
        if (!by_pid.count(pid)) {
          by_pid[pid] = by_pid.size() < kMaxGdbProcesses
                            ? gdb_stacks(pid)
                            : fmt::format("(not taken: stacks are taken for {} processes at most, the ranks the hang "
                                          "names first)",
                                          kMaxGdbProcesses);
        }
        sup.stacks[r] = by_pid[pid];
      }
    }
    if (before_teardown) {
      try {
        before_teardown();
      } catch (const std::exception& e) {
        sup.message += fmt::format(" (snapshot before teardown failed: {})", e.what());
      }
    }
    block.start_barrier.abort();
    group.kill_all();
    const auto until = Clock::now() + kReapGrace;
    while (group.running() > 0 && Clock::now() < until) absorb(group.wait_exits(kPollInterval));
  }

  if (sup.status == RunStatus::kCompleted && !failed_ranks.empty()) {
    sup.status = RunStatus::kWorkerFailed;
    std::vector<std::string> parts;
    for (int r : failed_ranks) {
      const WorkerSlot& s = block.slots[r];
      std::string what = fmt::format("rank {}: {} at step {}", r, describe_exit(sup.exits[r]), s.steps.load());
      if (s.error[0] != '\0') what += fmt::format(" ({})", s.error);
      parts.push_back(what);
    }
    sup.message = fmt::format("{}", fmt::join(parts, "; "));
  }
  sup.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  return sup;
}

}  // namespace sharebench
