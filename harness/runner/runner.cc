// Runner: cells × repetitions, supervised, checked, recorded.
#include "harness/runner/runner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <exception>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/arena/shared_arena.h"
#include "harness/checkers/model_sharing.h"
#include "harness/env/environment.h"
#include "harness/faults/fault_injector.h"
#include "harness/launch/launcher.h"
#include "harness/results/results_json.h"
#include "harness/results/run_directory.h"
#include "harness/runner/interrupt.h"
#include "harness/runner/dead_run_sweep.h"
#include "harness/runner/scenario_executor.h"
#include "harness/runner/leak_check.h"
#include "harness/runner/private_dir.h"
#include "harness/watchdog/sanitizer_reports.h"
#include "harness/scenario/scenario.h"
#include "harness/util/clock.h"
#include "harness/scenario/cell_flags.h"
#include "harness/watchdog/launch_budget.h"
#include "harness/watchdog/process_probe.h"
#include "harness/watchdog/wait_for.h"
#include "harness/watchdog/watchdog.h"

namespace sharebench {

namespace {

std::string utc_now(const char* format) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

// What a worker process printed to stderr, kept in the results: at most this much, from its end.
constexpr std::size_t kStderrTailBytes = 8192;

// The last `lines` non-empty lines of a text, joined with " | ".
std::string last_lines(const std::string& text, int lines) {
  std::vector<std::string> found;
  std::size_t end = text.size();
  while (end > 0 && static_cast<int>(found.size()) < lines) {
    const std::size_t nl = text.rfind('\n', end - 1);
    const std::size_t begin = nl == std::string::npos ? 0 : nl + 1;
    std::string line = text.substr(begin, end - begin);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty()) found.insert(found.begin(), line);
    if (nl == std::string::npos) break;
    end = nl;
  }
  return fmt::format("{}", fmt::join(found, " | "));
}

// Each worker's memory figures, the cell's peaks, a USS series per rank.
void record_memory(const Supervision& sup, const HarnessBlock& block, Repetition& rep) {
  double uss = 0, rss = 0, pss = 0, shared = 0;
  for (WorkerRecord& w : rep.workers) {
    auto it = sup.memory.find(w.rank);
    if (it == sup.memory.end() || it->second.samples.empty()) continue;
    const MemoryTrack& t = it->second;
    w.rss_mb_peak = t.peak.rss_mb;
    w.pss_mb_peak = t.peak.pss_mb;
    w.uss_mb_peak = t.peak.uss_mb;
    w.shared_mb_peak = t.peak.shared_mb;
    w.uss_mb_start = t.at_start ? t.at_start->uss_mb : t.samples.front().uss_mb;
    // The worker's own reading as its work ended, when it took one, is the exact end.
    const double own_end = static_cast<double>(block.slots[w.rank].uss_kb_at_end.load()) / 1024;
    w.uss_mb_end = own_end > 0 ? own_end : t.last.uss_mb;
    w.uss_mb_peak = std::max(w.uss_mb_peak, own_end);
    uss = std::max(uss, w.uss_mb_peak);
    rss = std::max(rss, t.peak.rss_mb);
    pss = std::max(pss, t.peak.pss_mb);
    shared = std::max(shared, t.peak.shared_mb);
    rep.series.push_back(Series{"uss-mb", w.rank, t.uss_series});
  }
  if (uss > 0) {
    rep.metrics["worker_uss_mb_peak"] = uss;
    rep.metrics["worker_rss_mb_peak"] = rss;
    rep.metrics["worker_pss_mb_peak"] = pss;
    rep.metrics["worker_shared_mb_peak"] = shared;
  }
}

// The `memory` check: no worker's private memory kept growing past the bound while it worked
// (memory_probe.h: from a quarter of the way through to the end). Only when some worker was
// sampled often enough (not under threads: they share one process).
std::optional<Check> memory_check(const Supervision& sup, const HarnessBlock& block, const CellConfig& cell,
                                  double model_mb) {
  double worst = 0, from = 0, to = 0;
  int worst_rank = -1, measured = 0;
  for (const auto& [rank, t] : sup.memory) {
    double a = 0, b = 0;
    // The later of the worker's own readings: as work() returned, and its last while it worked.
    const double end_mb = static_cast<double>(std::max(block.slots[rank].uss_kb_at_end.load(),
                                                       block.slots[rank].uss_kb_while_working.load())) / 1024;
    const auto growth = t.sustained_growth_mb(end_mb, &a, &b);
    if (!growth) continue;
    ++measured;
    if (worst_rank < 0 || *growth > worst) {
      worst = *growth;
      worst_rank = rank;
      from = a;
      to = b;
    }
  }
  if (measured == 0) return std::nullopt;
  if (std::string_view(sanitizer_in_build()) == "AddressSanitizer") {
    // Its quarantine keeps freed memory private for a while: growth is the sanitizer's, not the run's.
    // No check rather than an unknown one, which would make every clean cell of an ASan build
    // unexpected (as under threads, where there is no figure per worker); the figures stay.
    return std::nullopt;
  }
  // A worker's private memory holds its gradients (the model's size again) and the allocator's
  // caches for activations: with a large model the bound grows with it, 8 times its bytes.
  const double bound = std::max(cell.max_growth_mb, 8 * model_mb);
  const std::string bound_text = bound > cell.max_growth_mb
                                     ? fmt::format("{:.0f} MiB (8 x the model's {:.1f} MiB)", bound, model_mb)
                                     : fmt::format("{} MiB (--max-growth-mb)", cell.max_growth_mb);
  const std::string detail = fmt::format(
      "rank {}'s private memory (USS) went from {:.1f} MiB a quarter of the way through its work to {:.1f} MiB at the end",
      worst_rank, from, to);
  if (worst > bound) {
    return Check{"memory", Verdict::kFail, worst,
                 fmt::format("{}: it kept growing, {:.1f} MiB, past the bound of {}", detail, worst, bound_text)};
  }
  return Check{"memory", Verdict::kPass, worst,
               fmt::format("{} ({} worker(s) sampled; the most any grew, within {})", detail, measured, bound_text)};
}

// Harness-level figures and the liveness check, from the slots and the supervision.
void record_workers(const Supervision& sup, const HarnessBlock& block, std::int64_t launch_ns, Repetition& rep) {
  std::int64_t steps_total = 0;
  double run_s = 0, launch_max = 0, launch_sum = 0;
  int launched = 0;
  for (int r = 0; r < block.procs; ++r) {
    const WorkerSlot& s = block.slots[r];
    WorkerRecord w;
    w.rank = r;
    auto it = sup.exits.find(r);
    if (it != sup.exits.end()) {
      w.pid = it->second.pid;
      w.exited = it->second.exited;
      w.exit_code = it->second.exit_code;
      w.signal = it->second.signal;
    }
    w.steps = s.steps.load();
    if (s.arrived_ns > 0) {
      w.launch_s = (s.arrived_ns - launch_ns) * 1e-9;
      launch_max = std::max(launch_max, w.launch_s);
      launch_sum += w.launch_s;
      ++launched;
    }
    w.error = s.error;
    if (block.private_dir[0] != '\0') {
      w.stderr_tail = read_file_tail(fmt::format("{}/rank-{}.stderr", block.private_dir, r), kStderrTailBytes);
    }
    const bool failed = !(w.exited && w.exit_code == 0) ||
                        s.phase.load() != static_cast<std::int32_t>(WorkerPhase::kDone);
    if (failed && w.error.empty() && !w.stderr_tail.empty()) w.error = last_lines(w.stderr_tail, 2);
    if (auto st = sup.stalls.find(r); st != sup.stalls.end()) w.stall = st->second;
    if (auto st = sup.stacks.find(r); st != sup.stacks.end()) w.stacks = st->second;
    w.chaos_recent = describe_recent_chaos(s.chaos, launch_ns);
    if (s.started_ns > 0 && s.finished_ns > s.started_ns) run_s = std::max(run_s, (s.finished_ns - s.started_ns) * 1e-9);
    steps_total += w.steps;
    rep.workers.push_back(std::move(w));
  }
  record_memory(sup, block, rep);
  rep.metrics["steps_total"] = static_cast<double>(steps_total);
  if (run_s > 0) {
    rep.metrics["run_s"] = run_s;
    rep.metrics["steps_per_s"] = steps_total / run_s;
  }
  if (launched > 0) {
    rep.metrics["launch_s_max"] = launch_max;
    rep.metrics["launch_s_mean"] = launch_sum / launched;
  }
  int failed = 0;
  std::vector<std::string> unfinished;
  for (const auto& w : rep.workers) {
    const bool finished = block.slots[w.rank].phase.load() == static_cast<std::int32_t>(WorkerPhase::kDone);
    const bool clean_exit = w.exited && w.exit_code == 0;
    failed += (clean_exit && finished) ? 0 : 1;
    // A thread that ended itself leaves its host's exit code clean; its slot says it never finished.
    if (clean_exit && !finished) unfinished.push_back(fmt::format("rank {} ended without finishing its work", w.rank));
  }
  if (sup.status == RunStatus::kCompleted && !unfinished.empty()) {
    rep.status = RunStatus::kWorkerFailed;
    rep.status_message = fmt::format("{}", fmt::join(unfinished, "; "));
  }
  if (sup.status == RunStatus::kCompleted && unfinished.empty()) {
    rep.checks.push_back(Check{"liveness", Verdict::kPass, 0.0, "every worker ran to completion and exited 0"});
  } else {
    rep.checks.push_back(Check{"liveness", Verdict::kFail, static_cast<double>(failed),
                               fmt::format("{}: {}", to_string(rep.status), rep.status_message)});
  }
}

// The `lock-order` check every cell whose setup() made a ProcessMutex gets (unless the scenario
// wrote its own): a cycle in the graph of nested acquisitions fails, naming the locks and ranks.
std::optional<Check> lock_order_check(const LockRegistry& locks, const std::vector<Check>& already) {
  int mutexes = 0;
  for (int id = 0; id < locks.count(); ++id) mutexes += locks.entry(id).kind == LockRegistry::Kind::kMutex;
  if (mutexes == 0) return std::nullopt;
  if (std::any_of(already.begin(), already.end(), [](const Check& c) { return c.name == "lock-order"; })) {
    return std::nullopt;
  }
  const std::string untracked =
      locks.untracked() > 0 ? fmt::format(" ({} more locks beyond {} were not tracked)", locks.untracked(), LockRegistry::kMaxLocks)
                            : "";
  const std::vector<int> cycle = locks.find_cycle();
  if (!cycle.empty()) {
    return Check{"lock-order", Verdict::kFail, static_cast<double>(cycle.size()),
                 fmt::format("lock-order inversion: {}: a deadlock waiting to happen{}", locks.describe_cycle(cycle),
                             untracked)};
  }
  return Check{"lock-order", Verdict::kPass, 0.0,
               locks.any_nesting()
                   ? fmt::format("every nested acquisition of the {} lock(s) followed one global order{}", mutexes, untracked)
                   : fmt::format("no lock was taken while holding another ({} lock(s)){}", mutexes, untracked)};
}

// `lock-init`: every registered lock still is the object setup() made. A worker that constructs the
// shared lock again (as each "initialises" it when it starts) wipes its owner and waiters: two
// workers may then hold it at once, and its lock-order edges are lost. Caught whatever the schedule.
std::optional<Check> lock_init_check(const LockRegistry& locks) {
  if (locks.count() == 0) return std::nullopt;
  const std::vector<int> again = locks.reconstructed();
  if (again.empty()) {
    return Check{"lock-init", Verdict::kPass, 0.0,
                 fmt::format("all {} lock(s) and barrier(s) kept the state setup() gave them", locks.count())};
  }
  std::string names;
  for (const int id : again) names += (names.empty() ? "'" : ", '") + locks.name(id) + "'";
  return Check{"lock-init", Verdict::kFail, static_cast<double>(again.size()),
               fmt::format("{} was constructed again while the workers ran: a lock re-initialised in use forgets "
                           "its owner and waiters, so two workers can hold it at once; construct it once, in setup()",
                           names)};
}

bool wants_gdb_stacks(const CellConfig& c) { return c.stacks == "gdb" || (c.stacks == "auto" && gdb_available()); }

// A progress line on a terminal: cells done, the cell running, its steps and a hang countdown.
class ProgressLine {
 public:
  ProgressLine(std::size_t total, bool enabled) : total_(total), enabled_(enabled), t0_(std::chrono::steady_clock::now()) {}
  void cell(std::size_t done, std::string what) {
    done_ = done;
    what_ = std::move(what);
    last_ = {};
    draw("");
  }
  void tick(const CellProgress& p) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    // A program under exec has no known total: its steps so far.
    std::string detail = p.steps_total > 0 ? fmt::format("  steps {}/{}", p.steps_done, p.steps_total)
                                           : fmt::format("  steps {}", p.steps_done);
    if (p.quiet_s >= 1.0) detail += fmt::format(", no progress for {:.0f} s (hang at {:.0f} s)", p.quiet_s, p.hang_timeout_s);
    draw(detail);
  }
  void clear() const {
    if (enabled_) std::fprintf(stderr, "\r\033[K");
  }

 private:
  void draw(const std::string& detail) const {
    if (!enabled_) return;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    std::string left;
    if (done_ > 0) left = fmt::format(", about {:.0f} s left", elapsed / done_ * (total_ - done_));
    std::fprintf(stderr, "\r\033[K[%zu/%zu] %s%s  (%.0f s%s)", done_, total_, what_.c_str(), detail.c_str(), elapsed,
                 left.c_str());
    std::fflush(stderr);
  }
  std::size_t total_, done_ = 0;
  bool enabled_;
  std::string what_;
  std::chrono::steady_clock::time_point t0_, last_{};
};
}  // namespace

Repetition run_repetition(const PlannedCell& planned, int index, const ProgressSink& progress) {
  Repetition rep;
  rep.index = index;
  CellConfig cell = planned.config;
  cell.repetition = index;
  const ScenarioInfo* info = ScenarioRegistry::instance().find(cell.scenario);
  mark_runner_process();
  const ResourceSnapshot resources_before = take_resource_snapshot();
  std::vector<std::string> worker_fd_leaks;  // what each worker process reported left open
  try {
    if (!info) throw std::runtime_error(fmt::format("scenario '{}' is not registered", cell.scenario));
    // Shared, not owned: a setup() or check() that outlives its deadline goes on running on its
    // own (scenario_executor.h) and must find the scenario and the arena still there.
    std::shared_ptr<Scenario> scenario = info->create(cell);
    if (auto reason = scenario->unavailable()) {
      rep.status = RunStatus::kSkipped;
      rep.status_message = *reason;
      rep.verdict = Verdict::kUnknown;
      judge_against(planned.expected, rep);
      return rep;
    }
    std::optional<FaultInjector> faults;
    if (cell.fault.active() && !cell.fault.targets_tree()) {  // a program's tree: its supervisor injects it
      if (cell.start == StartMethod::kThread) {
        throw std::runtime_error("a fault signals one worker process; under the thread start method all share one");
      }
      faults.emplace(cell.fault, cell.hang_timeout_s);
    }
    auto arena_owner = std::make_shared<SharedArena>(SharedArena::create(static_cast<std::size_t>(cell.arena_mb) << 20));
    SharedArena& arena = *arena_owner;
    auto* block = arena.create<HarnessBlock>(HarnessBlock::kRegionName, cell.procs);
    const PrivateDirectory private_dir;  // removed, with the workers' stderr files, when the repetition ends
    std::snprintf(block->private_dir, sizeof block->private_dir, "%s", private_dir.path().c_str());
    const auto config = std::make_shared<const CellConfig>(cell);
    {
      // Every ProcessMutex and ProcessBarrier setup() lays out registers with the cell's registry.
      const LockRegistry::RegistrationScope registering(block->locks, arena.base(), arena.capacity());
      ScenarioExecutor::instance().call(cell, cell.deadline_s, fmt::format("{}'s setup()", cell.scenario),
                                        wants_gdb_stacks(cell), [scenario, arena_owner, config, dir = private_dir.path()] {
                                          SetupContext setup(*config, *arena_owner, dir);
                                          scenario->setup(setup);
                                        });
    }

    auto launcher = make_launcher(cell.start);
    const std::int64_t launch_ns = monotonic_ns();
    Supervision sup;
    std::optional<WaitForReport> wait_for;  // read while the workers were frozen, on a hang
    {
      auto group = launcher->launch(cell, arena);
      std::function<void(double)> on_tick;
      if (progress) {
        on_tick = [&](double quiet_s) {
          CellProgress p;
          for (int r = 0; r < block->procs; ++r) p.steps_done += block->slots[r].steps.load(std::memory_order_relaxed);
          p.steps_total = cell.command.empty() ? cell.workload.steps * cell.procs : 0;
          p.quiet_s = quiet_s;
          p.hang_timeout_s = cell.hang_timeout_s;
          progress(p);
        };
      }
      WatchdogLimits limits{cell.hang_timeout_s, cell.deadline_s, wants_gdb_stacks(cell) && !info->opted_out("stacks", cell.variant)};
      limits.launch_deadline_s = launch_deadline_s(cell.start, cell.procs, usable_cores(), cell.hang_timeout_s);
      sup = supervise(*group, *block, limits,
                      [&] {
                        wait_for = describe_wait_for(*block);
                        scenario->before_teardown(arena);
                      },
                      faults ? &*faults : nullptr, on_tick);
    }  // the group is gone: every worker has been reaped
    rep.status = sup.status;
    rep.status_message = sup.message;
    rep.wall_s = sup.wall_s;
    record_workers(sup, *block, launch_ns, rep);  // may downgrade a completed run: see there
    for (int r = 0; r < block->procs; ++r) {
      const WorkerSlot& slot = block->slots[r];
      if (slot.leaked_fds > 0) {
        worker_fd_leaks.push_back(fmt::format("rank {} left {} file descriptor(s) open after work() ({})", r,
                                              slot.leaked_fds, slot.leaked_fd_names));
      }
    }
    if (wait_for && wait_for->any_wait) {
      rep.status_message += "; " + wait_for->text;
      for (Check& c : rep.checks) {
        if (c.name == "liveness") c.message += "; " + wait_for->text;
      }
    }
    {  // every worker is gone: its sanitizer reports, if any, are complete
      const SanitizerReports reports = read_sanitizer_reports(private_dir.path());
      rep.sanitizer_report = reports.text;  // kept when the scenario opted out: the race it expects
      if (!info->opted_out("sanitizer", cell.variant)) {
        if (auto check = sanitizer_check(reports)) rep.checks.push_back(*check);
      }
    }
    if (faults) {
      // The verdict names what happened: the liveness message carries the fault, and the fault
      // has its own check.
      const Check injected = faults->check(*block);
      for (Check& c : rep.checks) {
        if (c.name == "liveness") c.message += fmt::format(" [fault: {}]", injected.message);
      }
      rep.status_message += fmt::format(" [fault: {}]", injected.message);
      rep.checks.push_back(injected);
    }

    // The checker works on a copy of the repetition, which stays its own if it never returns.
    auto checked = std::make_shared<Repetition>(rep);
    try {
      ScenarioExecutor::instance().call(cell, cell.deadline_s, fmt::format("{}'s check()", cell.scenario),
                                        wants_gdb_stacks(cell), [scenario, arena_owner, config, checked] {
                                          CheckContext check(*config, *arena_owner, *checked);
                                          scenario->check(check);
                                        });
      rep = *checked;
    } catch (const CallTimedOut& e) {
      rep.status = RunStatus::kSetupTimeout;
      rep.status_message = e.what();
      rep.checks.push_back(Check{"checker", Verdict::kFail, std::nullopt, e.what()});
    } catch (const std::exception& e) {
      rep = *checked;
      rep.checks.push_back(Check{"checker", Verdict::kUnknown, std::nullopt,
                                 fmt::format("the scenario's checker threw: {}", e.what())});
    }
    if (!info->opted_out("lock-order", cell.variant)) {
      if (auto order = lock_order_check(block->locks, rep.checks)) rep.checks.push_back(*order);
    }
    if (!info->opted_out("lock-init", cell.variant)) {
      if (auto init = lock_init_check(block->locks)) rep.checks.push_back(*init);
    }
    // After check(): a scenario that records model_bytes scales the bound with its model.
    if (!info->opted_out("memory", cell.variant)) {
      const auto model = rep.metrics.find("model_bytes");
      const double model_mb = model == rep.metrics.end() ? 0 : model->second / (1 << 20);
      if (auto memory = memory_check(sup, *block, cell, model_mb)) rep.checks.push_back(*memory);
    }
    if (cell.chaos_seed != 0) {  // what --chaos did, summed over the workers (docs/chaos.md)
      ChaosTally sum;
      for (int r = 0; r < block->procs; ++r) {
        const ChaosTally& t = block->slots[r].chaos;
        sum.points += t.points;
        sum.yields += t.yields;
        sum.sleeps += t.sleeps;
        sum.slept_ns += t.slept_ns;
        sum.skipped += t.skipped;
        sum.priority_changes += t.priority_changes;
        sum.preemptions += t.preemptions;
        sum.preempted_ns += t.preempted_ns;
      }
      rep.metrics["chaos_points"] = static_cast<double>(sum.points);
      rep.metrics["chaos_yields"] = static_cast<double>(sum.yields);
      rep.metrics["chaos_sleeps"] = static_cast<double>(sum.sleeps);
      rep.metrics["chaos_slept_s"] = static_cast<double>(sum.slept_ns) * 1e-9;
      rep.metrics["chaos_refused_by_budget"] = static_cast<double>(sum.skipped);
      rep.metrics["chaos_priority_changes"] = static_cast<double>(sum.priority_changes);
      rep.metrics["chaos_preemptions"] = static_cast<double>(sum.preemptions);
      rep.metrics["chaos_preempted_s"] = static_cast<double>(sum.preempted_ns) * 1e-9;
    }
    if (!info->opted_out("model-shared", cell.variant)) {
      std::map<int, double> peak_uss_mb;
      for (const auto& [rank, track] : sup.memory) {
        const WorkerSlot& s = block->slots[rank];
        const auto own_kb = std::max(s.uss_kb_at_end.load(), s.uss_kb_while_working.load());
        peak_uss_mb[rank] = std::max(track.peak.uss_mb, static_cast<double>(own_kb) / 1024);
      }
      if (auto shared = model_shared_check(*block, peak_uss_mb)) rep.checks.push_back(*shared);
    }
  } catch (const CallTimedOut& e) {
    rep.status = RunStatus::kSetupTimeout;
    rep.status_message = e.what();
    rep.checks.push_back(Check{"setup", Verdict::kFail, std::nullopt, e.what()});
  } catch (const std::exception& e) {
    rep.status = RunStatus::kError;
    rep.status_message = e.what();
    rep.checks.push_back(Check{"setup", Verdict::kUnknown, std::nullopt, e.what()});
  }
  // The arena, the scenario and every worker are gone by now: whatever remains is a leak. A process
  // left behind is reported, then killed: a run never leaves one.
  const ResourceSnapshot resources_after = take_settled_snapshot(resources_before);
  rep.checks.push_back(compare_resources(resources_before, resources_after, worker_fd_leaks));
  kill_leftover_processes(resources_before, resources_after);
  remove_leftover_segments(resources_before, resources_after);
  const std::vector<std::string>& disabled = cell.disabled_checks;
  if (!disabled.empty()) {
    rep.checks.erase(std::remove_if(rep.checks.begin(), rep.checks.end(),
                                    [&](const Check& c) {
                                      return std::find(disabled.begin(), disabled.end(), c.name) != disabled.end();
                                    }),
                     rep.checks.end());
  }
  rep.verdict = overall_verdict(rep.checks);
  judge_against(planned.expected, rep);
  return rep;
}

RunOutcome run_matrix(const RunnerOptions& options) {
  // What a runner killed by SIGKILL could not remove is reclaimed before anything of this run is made.
  if (const SweptRuns swept = sweep_dead_runs(); !swept.empty()) {
    std::fprintf(stderr, "sharebench: %s\n", swept.summary().c_str());
  }
  RunOutcome out;
  RunResult& run = out.result;
  run.run_id = fmt::format("{}-{}", utc_now("%Y%m%d-%H%M%S"), ::getpid());
  run.started_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
  run.command = options.command;
  run.environment = collect_environment();
  run.shard = options.shard;
  if (!options.cells.empty()) {
    run.environment["threads_per_worker"] = std::to_string(options.cells.front().config.workload.threads_per_worker);
  }
  const RunDirectory dir = RunDirectory::create(options.out_dir, options.runs_root, run.run_id);
  out.results_path = dir.file("results.json");
  auto save = [&] { dir.write_atomically("results.json", dump_json(results_to_json(run), 1) + "\n"); };
  save();  // evidence from the start: an empty run that says it is running

  const std::string binary = options.command.empty() ? "sharebench" : options.command.front();
  std::size_t done = 0;
  ProgressLine line(options.cells.size(), options.progress);
  const ProgressSink sink = [&](const CellProgress& p) { line.tick(p); };
  for (const PlannedCell& planned : options.cells) {
    if (interrupt_requested()) break;
    CellResult cell;
    cell.config = planned.config;
    cell.kind = planned.kind;
    cell.expected = planned.expected;
    cell.known_bug = planned.known_bug;
    cell.repro = repro_command(binary, planned.config, options.repetitions);
    for (int i = 0; i < options.repetitions && !interrupt_requested(); ++i) {
      std::string what = planned.config.id();
      if (options.repetitions > 1) what += fmt::format(" rep {}/{}", i + 1, options.repetitions);
      line.cell(done, what);
      cell.repetitions.push_back(run_repetition(planned, i, options.progress ? sink : ProgressSink{}));
    }
    run.cells.push_back(std::move(cell));
    ++done;
    save();
  }
  line.clear();

  run.finished_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
  bool all_expected = true;
  for (const auto& c : run.cells) all_expected &= c.as_expected();
  if (interrupt_requested()) {
    run.status = "interrupted";
    out.exit_code = interrupted_exit_code();
  } else {
    run.status = "complete";
    out.exit_code = all_expected ? 0 : 1;
  }
  save();
  return out;
}

}  // namespace sharebench
