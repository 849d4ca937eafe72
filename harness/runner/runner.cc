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
#include "harness/env/environment.h"
#include "harness/faults/fault_injector.h"
#include "harness/launch/launcher.h"
#include "harness/results/results_json.h"
#include "harness/results/run_directory.h"
#include "harness/runner/interrupt.h"
#include "harness/runner/leak_check.h"
#include "harness/scenario/scenario.h"
#include "harness/util/clock.h"
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
    if (auto st = sup.stalls.find(r); st != sup.stalls.end()) w.stall = st->second;
    if (auto st = sup.stacks.find(r); st != sup.stacks.end()) w.stacks = st->second;
    if (s.started_ns > 0 && s.finished_ns > s.started_ns) run_s = std::max(run_s, (s.finished_ns - s.started_ns) * 1e-9);
    steps_total += w.steps;
    rep.workers.push_back(std::move(w));
  }
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

void print_progress(std::size_t done, std::size_t total, const std::string& what, double elapsed_s) {
  std::fprintf(stderr, "\r\033[K[%zu/%zu] %s  (%.0f s)", done, total, what.c_str(), elapsed_s);
  std::fflush(stderr);
}
}  // namespace

Repetition run_repetition(const PlannedCell& planned, int index, std::size_t arena_bytes, bool gdb_stacks,
                          const std::vector<std::string>& disabled_checks) {
  Repetition rep;
  rep.index = index;
  CellConfig cell = planned.config;
  cell.repetition = index;
  const ScenarioInfo* info = ScenarioRegistry::instance().find(cell.scenario);
  const ResourceSnapshot resources_before = take_resource_snapshot();
  try {
    if (!info) throw std::runtime_error(fmt::format("scenario '{}' is not registered", cell.scenario));
    auto scenario = info->create(cell);
    if (auto reason = scenario->unavailable()) {
      rep.status = RunStatus::kSkipped;
      rep.status_message = *reason;
      rep.verdict = Verdict::kUnknown;
      judge_against(planned.expected, rep);
      return rep;
    }
    std::optional<FaultInjector> faults;
    if (cell.fault.active()) {
      if (cell.start == StartMethod::kThread) {
        throw std::runtime_error("a fault signals one worker process; under the thread start method all share one");
      }
      faults.emplace(cell.fault, cell.hang_timeout_s);
    }
    SharedArena arena = SharedArena::create(arena_bytes);
    auto* block = arena.create<HarnessBlock>(HarnessBlock::kRegionName, cell.procs);
    SetupContext setup(cell, arena);
    scenario->setup(setup);

    auto launcher = make_launcher(cell.start);
    const std::int64_t launch_ns = monotonic_ns();
    Supervision sup;
    {
      auto group = launcher->launch(cell, arena);
      sup = supervise(*group, *block, WatchdogLimits{cell.hang_timeout_s, cell.deadline_s, gdb_stacks},
                      [&] { scenario->before_teardown(arena); }, faults ? &*faults : nullptr);
    }  // the group is gone: every worker has been reaped
    rep.status = sup.status;
    rep.status_message = sup.message;
    rep.wall_s = sup.wall_s;
    record_workers(sup, *block, launch_ns, rep);  // may downgrade a completed run: see there
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

    CheckContext check(cell, arena, rep);
    try {
      scenario->check(check);
    } catch (const std::exception& e) {
      rep.checks.push_back(Check{"checker", Verdict::kUnknown, std::nullopt,
                                 fmt::format("the scenario's checker threw: {}", e.what())});
    }
  } catch (const std::exception& e) {
    rep.status = RunStatus::kError;
    rep.status_message = e.what();
    rep.checks.push_back(Check{"setup", Verdict::kUnknown, std::nullopt, e.what()});
  }
  // The arena, the scenario and every worker are gone by now: whatever remains is a leak.
  rep.checks.push_back(compare_resources(resources_before, take_resource_snapshot()));
  if (!disabled_checks.empty()) {
    rep.checks.erase(std::remove_if(rep.checks.begin(), rep.checks.end(),
                                    [&](const Check& c) {
                                      return std::find(disabled_checks.begin(), disabled_checks.end(), c.name) !=
                                             disabled_checks.end();
                                    }),
                     rep.checks.end());
  }
  rep.verdict = overall_verdict(rep.checks);
  judge_against(planned.expected, rep);
  return rep;
}

std::vector<std::string> repro_args(const CellConfig& c, int repetitions) {
  const WorkloadOptions& w = c.workload;
  const WorkloadOptions d;
  const CellConfig dc;
  std::vector<std::string> args{"run", "--scenario", c.scenario_variant(), "--start", std::string(to_string(c.start)),
                                "--procs", std::to_string(c.procs), "--steps", std::to_string(w.steps),
                                "--seed", std::to_string(w.seed)};
  auto add = [&](const char* flag, const std::string& value) {
    args.emplace_back(flag);
    args.push_back(value);
  };
  if (repetitions != 1) add("--repetitions", std::to_string(repetitions));
  if (w.batch != d.batch) add("--batch", std::to_string(w.batch));
  if (w.lr != d.lr) add("--lr", fmt::format("{}", w.lr));
  if (w.momentum != d.momentum) add("--momentum", fmt::format("{}", w.momentum));
  if (w.hidden != d.hidden) add("--hidden", std::to_string(w.hidden));
  if (w.threads_per_worker != d.threads_per_worker) add("--threads", std::to_string(w.threads_per_worker));
  if (w.step_delay_us != d.step_delay_us) add("--step-delay-us", std::to_string(w.step_delay_us));
  if (w.average_every != d.average_every) add("--average-every", std::to_string(w.average_every));
  if (c.hang_timeout_s != dc.hang_timeout_s) add("--hang-timeout", fmt::format("{}", c.hang_timeout_s));
  if (c.deadline_s != dc.deadline_s) add("--deadline", fmt::format("{}", c.deadline_s));
  if (c.fault.active()) add("--fault", c.fault.spec());
  return args;
}

std::string repro_command(const std::string& binary, const PlannedCell& cell, int repetitions) {
  std::string cmd = binary;
  for (const std::string& a : repro_args(cell.config, repetitions)) cmd += " " + a;
  return cmd;
}

RunOutcome run_matrix(const RunnerOptions& options) {
  RunOutcome out;
  RunResult& run = out.result;
  run.run_id = fmt::format("{}-{}", utc_now("%Y%m%d-%H%M%S"), ::getpid());
  run.started_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
  run.command = options.command;
  run.environment = collect_environment();
  if (!options.cells.empty()) {
    run.environment["threads_per_worker"] = std::to_string(options.cells.front().config.workload.threads_per_worker);
  }
  const RunDirectory dir = RunDirectory::create(options.out_dir, options.runs_root, run.run_id);
  out.results_path = dir.file("results.json");
  auto save = [&] { dir.write_atomically("results.json", results_to_json(run).dump(1) + "\n"); };
  save();  // evidence from the start: an empty run that says it is running

  const std::string binary = options.command.empty() ? "sharebench" : options.command.front();
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t done = 0;
  const std::size_t total = options.cells.size();
  for (const PlannedCell& planned : options.cells) {
    if (interrupt_requested()) break;
    CellResult cell;
    cell.config = planned.config;
    cell.expected = planned.expected;
    cell.known_bug = planned.known_bug;
    cell.repro = repro_command(binary, planned, options.repetitions);
    for (int i = 0; i < options.repetitions && !interrupt_requested(); ++i) {
      if (options.progress) {
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::string what = planned.config.id();
        if (options.repetitions > 1) what += fmt::format(" rep {}/{}", i + 1, options.repetitions);
        if (done > 0) what += fmt::format(", about {:.0f} s left", elapsed / done * (total - done));
        print_progress(done, total, what, elapsed);
      }
      cell.repetitions.push_back(
          run_repetition(planned, i, options.arena_bytes, options.gdb_stacks, options.disabled_checks));
    }
    run.cells.push_back(std::move(cell));
    ++done;
    save();
  }
  if (options.progress) std::fprintf(stderr, "\r\033[K");

  run.finished_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
  bool all_expected = true;
  for (const auto& c : run.cells) all_expected &= c.as_expected();
  if (interrupt_requested()) {
    run.status = "interrupted";
    out.exit_code = 130;
  } else {
    run.status = "complete";
    out.exit_code = all_expected ? 0 : 1;
  }
  save();
  return out;
}

}  // namespace sharebench
