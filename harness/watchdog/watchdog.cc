// Watchdog: heartbeat supervision of one cell repetition.
#include "harness/watchdog/watchdog.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/util/interrupt.h"
#include "harness/watchdog/process_probe.h"

namespace sharebench {

namespace {
using Clock = std::chrono::steady_clock;
constexpr auto kPollInterval = std::chrono::milliseconds(20);
constexpr auto kLaunchCpuInterval = std::chrono::milliseconds(100);  // a launching worker's CPU time, read
// After a kill, how long to wait for exits before giving up on a process (it is then unkillable:
// in uninterruptible sleep). Nothing the harness can do beyond that; it is reported.
constexpr auto kReapGrace = std::chrono::seconds(10);
// gdb takes 2–3 s of CPU per LibTorch process (more on a loaded machine), one per core at a time:
// 64 of them on a few cores would keep a hang's teardown busy for minutes. The ranks the hang
// names come first.
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

namespace {

// One supervision: the loop's state and each of its duties, one method each.
class Supervisor {
 public:
  Supervisor(WorkerGroup& group, HarnessBlock& block, const WatchdogLimits& limits, FaultInjector* faults)
      : group_(group), block_(block), limits_(limits), faults_(faults), procs_(block.procs),
        threads_(group.ranks_share_a_process()), start_(Clock::now()), last_beat_(procs_, 0),
        last_phase_(procs_, -1), last_progress_(procs_, start_), launch_progress_(start_),
        next_memory_sample_(start_), launch_cpu_(procs_, -1) {}

  Supervision run(const std::function<void()>& before_teardown, const std::function<void(double)>& on_tick) {
    while (group_.running() > 0) {
      absorb(group_.wait_exits(kPollInterval));
      if (group_.running() == 0) break;
      if (faults_) faults_->poll(group_, block_, sup_.exits);
      if (!round(on_tick)) break;
    }
    if (faults_) faults_->release(group_, sup_.exits);
    if (group_.running() > 0) tear_down(before_teardown);
    name_failed_ranks();
    sup_.wall_s = std::chrono::duration<double>(Clock::now() - start_).count();
    return std::move(sup_);
  }

 private:
  // Under the thread start method a rank whose thread returned cannot hang, though its exit is only
  // seen when the whole host ends. A worker process that finished its work and then hangs on its
  // way out (an exit handler, a static destructor) is still a hang.
  bool finished(int r) const {
    const auto phase = static_cast<WorkerPhase>(block_.slots[r].phase.load(std::memory_order_acquire));
    return threads_ && (phase == WorkerPhase::kDone || phase == WorkerPhase::kFailed);
  }

  void absorb(const std::vector<WorkerExit>& exits) {
    for (const WorkerExit& e : exits) {
      sup_.exits[e.rank] = e;
      if (!e.clean()) {
        failed_ranks_.push_back(e.rank);
        block_.failed_workers.fetch_add(1, std::memory_order_release);
        block_.start_barrier.abort();
      }
    }
  }

  // One round of supervision; false when the run must end (interrupt, hang, deadline).
  bool round(const std::function<void(double)>& on_tick) {
    const auto now = Clock::now();
    if (interrupt_requested()) {
      sup_.status = RunStatus::kInterrupted;
      sup_.message = fmt::format("interrupted by signal {}", interrupt_signal());
      return false;
    }
    const bool launching = block_.start_barrier.generation() == 0 && !block_.start_barrier.aborted();
    observe_heartbeats(now, launching);
    if (launching && !threads_ && now >= next_launch_cpu_) observe_launch_cpu(now);
    const double quiet_s = find_stalled(now, launching);
    if (on_tick) on_tick(quiet_s);
    if (now >= next_memory_sample_) sample_workers_memory(now);
    return !limit_reached(now, launching);
  }

  void observe_heartbeats(Clock::time_point now, bool launching) {
    for (int r = 0; r < procs_; ++r) {
      if (sup_.exits.count(r)) continue;
      const WorkerSlot& s = block_.slots[r];
      const std::uint64_t beat = s.heartbeat.load(std::memory_order_acquire);
      const std::int32_t phase = s.phase.load(std::memory_order_acquire);
      if (beat != last_beat_[r] || phase != last_phase_[r]) {
        last_beat_[r] = beat;
        last_phase_[r] = phase;
        last_progress_[r] = now;
        if (launching) launch_progress_ = now;
      }
    }
  }

  // A launching worker that uses CPU (loading LibTorch, say) is making progress. Under threads
  // every rank shares the host's CPU time, the runner's included: not a signal.
  void observe_launch_cpu(Clock::time_point now) {
    next_launch_cpu_ = now + kLaunchCpuInterval;
    const auto pids = group_.pids();
    for (int r = 0; r < procs_ && static_cast<std::size_t>(r) < pids.size(); ++r) {
      if (sup_.exits.count(r) || pids[r] <= 0 ||
          block_.slots[r].phase.load(std::memory_order_acquire) != static_cast<std::int32_t>(WorkerPhase::kLaunched)) {
        continue;
      }
      const long long ticks = cpu_ticks(pids[r]);
      if (ticks > launch_cpu_[r]) {
        if (launch_cpu_[r] >= 0) launch_progress_ = now;
        launch_cpu_[r] = ticks;
      }
    }
  }

  // The ranks quiet for longer than the hang timeout (into stalled_); the longest quiet, in seconds.
  double find_stalled(Clock::time_point now, bool launching) {
    stalled_.clear();
    double quiet_s = 0;
    for (int r = 0; r < procs_; ++r) {
      if (sup_.exits.count(r) || finished(r)) continue;
      const auto since = launching ? launch_progress_ : last_progress_[r];
      quiet_s = std::max(quiet_s, std::chrono::duration<double>(now - since).count());
      if (now - since > std::chrono::duration<double>(limits_.hang_timeout_s)) stalled_.push_back(r);
    }
    return quiet_s;
  }

  void sample_workers_memory(Clock::time_point now) {
    next_memory_sample_ = now + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(limits_.memory_interval_s));
    if (threads_) return;
    const auto pids = group_.pids();
    for (int r = 0; r < procs_; ++r) {
      if (sup_.exits.count(r) || static_cast<std::size_t>(r) >= pids.size() || pids[r] <= 0) continue;
      if (auto m = sample_memory(pids[r])) {
        const auto phase = static_cast<WorkerPhase>(block_.slots[r].phase.load(std::memory_order_acquire));
        sup_.memory[r].add(*m, static_cast<double>(block_.slots[r].steps.load(std::memory_order_relaxed)),
                           std::chrono::duration<double>(now - start_).count(), phase == WorkerPhase::kRunning);
      }
    }
  }

  // A hang, a launch past its deadline or the cell past its deadline: the status says which.
  bool limit_reached(Clock::time_point now, bool launching) {
    if (!stalled_.empty()) {
      sup_.status = RunStatus::kHang;
      sup_.message = fmt::format("no progress for {:.1f} s from rank(s) {}{}", limits_.hang_timeout_s,
                                 fmt::join(stalled_, ", "), launching ? " while workers were still launching" : "");
      return true;
    }
    if (launching && limits_.launch_deadline_s > 0 &&
        now - start_ > std::chrono::duration<double>(limits_.launch_deadline_s)) {
      for (int r = 0; r < procs_; ++r) {
        if (!sup_.exits.count(r) && block_.slots[r].phase.load() == static_cast<std::int32_t>(WorkerPhase::kLaunched)) {
          stalled_.push_back(r);
        }
      }
      sup_.status = RunStatus::kHang;
      sup_.message = fmt::format("rank(s) {} still launching after the launch deadline of {:.0f} s",
                                 fmt::join(stalled_, ", "), limits_.launch_deadline_s);
      return true;
    }
    if (now - start_ > std::chrono::duration<double>(limits_.deadline_s)) {
      sup_.status = RunStatus::kDeadline;
      sup_.message = fmt::format("cell ran past its {:.0f} s deadline", limits_.deadline_s);
      return true;
    }
    return false;
  }

  // Where every worker still alive is, its stacks (frozen first, so they show the stuck state),
  // the caller's snapshot, then the kill and the reaping.
  void tear_down(const std::function<void()>& before_teardown) {
    const auto pids = group_.pids();
    for (int r = 0; r < procs_; ++r) {
      if (sup_.exits.count(r) || finished(r)) continue;
      const WorkerSlot& s = block_.slots[r];
      // Under the thread start method every rank shares the host: describe the rank's own thread.
      const pid_t tid = threads_ ? s.tid.load() : 0;
      sup_.stalls[r] = fmt::format("{} at step {}; {}", phase_name(s.phase.load()), s.steps.load(),
                                   describe_process(pids.at(static_cast<std::size_t>(r)), tid));
    }
    group_.send_all(SIGSTOP);
    if (limits_.gdb_stacks && sup_.status != RunStatus::kInterrupted) take_stacks(pids);
    if (before_teardown) {
      try {
        before_teardown();
      } catch (const std::exception& e) {
        sup_.message += fmt::format(" (snapshot before teardown failed: {})", e.what());
      }
    }
    block_.start_barrier.abort();
    group_.kill_all();
    const auto until = Clock::now() + kReapGrace;
    while (group_.running() > 0 && Clock::now() < until) absorb(group_.wait_exits(kPollInterval));
  }

  void take_stacks(const std::vector<pid_t>& pids) {
    std::vector<int> order = stalled_;  // the ranks the hang names come first
    for (int r = 0; r < procs_; ++r) {
      if (std::find(order.begin(), order.end(), r) == order.end()) order.push_back(r);
    }
    std::vector<pid_t> wanted;  // thread mode: every rank shares one process
    for (int r : order) {
      const pid_t pid = pids.at(static_cast<std::size_t>(r));
      if (sup_.exits.count(r) || std::find(wanted.begin(), wanted.end(), pid) != wanted.end()) continue;
      if (wanted.size() < kMaxGdbProcesses) wanted.push_back(pid);
    }
    std::map<pid_t, std::string> by_pid = gdb_stacks(wanted);
    for (int r : order) {
      if (sup_.exits.count(r)) continue;
      const pid_t pid = pids.at(static_cast<std::size_t>(r));
      const auto it = by_pid.find(pid);
      sup_.stacks[r] = it != by_pid.end() ? it->second
                                          : fmt::format("(not taken: stacks are taken for {} processes at most, the "
                                                        "ranks the hang names first)",
                                                        kMaxGdbProcesses);
    }
  }

  void name_failed_ranks() {
    if (sup_.status != RunStatus::kCompleted || failed_ranks_.empty()) return;
    if (interrupt_requested()) {
      // Ctrl-C reaches the whole process group: fork workers die of it with the runner's default
      // action restored, and the cell was interrupted, not failed.
      sup_.status = RunStatus::kInterrupted;
      sup_.message = fmt::format("interrupted by signal {}", interrupt_signal());
      return;
    }
    sup_.status = RunStatus::kWorkerFailed;
    std::vector<std::string> parts;
    for (int r : failed_ranks_) {
      const WorkerSlot& s = block_.slots[r];
      std::string what = fmt::format("rank {}: {} at step {}", r, describe_exit(sup_.exits[r]), s.steps.load());
      if (s.error[0] != '\0') what += fmt::format(" ({})", s.error);
      parts.push_back(what);
    }
    sup_.message = fmt::format("{}", fmt::join(parts, "; "));
  }

  WorkerGroup& group_;
  HarnessBlock& block_;
  const WatchdogLimits& limits_;
  FaultInjector* faults_;
  const int procs_;
  const bool threads_;
  const Clock::time_point start_;
  Supervision sup_;
  std::vector<std::uint64_t> last_beat_;
  std::vector<std::int32_t> last_phase_;
  std::vector<Clock::time_point> last_progress_;
  Clock::time_point launch_progress_, next_memory_sample_;
  Clock::time_point next_launch_cpu_{};
  std::vector<long long> launch_cpu_;  // CPU ticks each launching worker had used
  std::vector<int> failed_ranks_;
  std::vector<int> stalled_;  // the ranks a hang names
};

}  // namespace

Supervision supervise(WorkerGroup& group, HarnessBlock& block, const WatchdogLimits& limits,
                      const std::function<void()>& before_teardown, FaultInjector* faults,
                      const std::function<void(double quiet_s)>& on_tick) {
  return Supervisor(group, block, limits, faults).run(before_teardown, on_tick);
}

}  // namespace sharebench
