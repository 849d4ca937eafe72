// run_repetition: one repetition of one cell, from a fresh arena to its verdict. The sequence is
// the runner's; the verdicts are the scenario's check() and the registered detectors'
// (harness/detectors/), each handed what its stage of the repetition left.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "harness/arena/shared_arena.h"
#include "harness/detectors/detector.h"
#include "harness/faults/fault_injector.h"
#include "harness/launch/launcher.h"
#include "harness/proc/leak_check.h"
#include "harness/proc/sanitizer_reports.h"
#include "harness/housekeeping/private_dir.h"
#include "harness/runner/runner.h"
#include "harness/runner/scenario_executor.h"
#include "harness/runner/worker_records.h"
#include "harness/scenario/scenario.h"
#include "harness/util/clock.h"
#include "harness/watchdog/process_probe.h"
#include "harness/watchdog/launch_budget.h"
#include "harness/watchdog/wait_for.h"
#include "harness/watchdog/watchdog.h"

namespace sharebench {

namespace {

bool wants_gdb_stacks(const CellConfig& c) { return c.stacks == "gdb" || (c.stacks == "auto" && gdb_available()); }

// Every registered detector of `stage` that the cell's scenario variant has not opted out of.
void run_detectors(DetectorStage stage, const ScenarioInfo& info, const RepetitionEvidence& evidence,
                   Repetition& rep) {
  for (const auto& detector : DetectorRegistry::instance().all()) {
    if (detector->stage() != stage || info.opted_out(detector->id(), evidence.cell->variant)) continue;
    // A detector that throws is its own check's `unknown`, with the reason (as Jepsen's checkers
    // are): the other checks and the run go on.
    try {
      detector->judge(evidence, rep);
    } catch (const std::exception& e) {
      rep.checks.emplace_back(std::string(detector->id().name()), Verdict::kUnknown, std::nullopt,
                              fmt::format("the {} detector failed: {}", detector->id().name(), e.what()));
    }
  }
}

// The fault --fault asks for, when the runner injects it (a program's tree: its supervisor does).
std::optional<FaultInjector> make_fault_injector(const CellConfig& cell) {
  std::optional<FaultInjector> faults;
  if (!cell.fault.active() || cell.fault.targets_tree()) return faults;
  if (cell.start == StartMethod::kThread) {
    throw std::runtime_error("a fault signals one worker process; under the thread start method all share one");
  }
  faults.emplace(cell.fault, cell.hang_timeout_s);
  return faults;
}

// Everything one repetition holds while its workers run. Shared, not owned, where a setup() or
// check() that outlives its deadline goes on running on its own (scenario_executor.h) and must
// find the scenario and the arena still there.
struct RepetitionState {
  std::shared_ptr<const CellConfig> config;
  const ScenarioInfo* info = nullptr;
  std::shared_ptr<Scenario> scenario;
  std::shared_ptr<SharedArena> arena;
  HarnessBlock* block = nullptr;
  PrivateDirectory private_dir;  // removed, with the workers' stderr files, when the repetition ends
  std::optional<FaultInjector> faults;
};

void run_setup(RepetitionState& s) {
  const CellConfig& cell = *s.config;
  s.faults = make_fault_injector(cell);
  s.arena = std::make_shared<SharedArena>(SharedArena::create(static_cast<std::size_t>(cell.arena_mb) << 20));
  s.block = s.arena->create<HarnessBlock>(HarnessBlock::kRegionName, cell.procs);
  std::snprintf(s.block->private_dir, sizeof s.block->private_dir, "%s", s.private_dir.path().c_str());
  // Every ProcessMutex and ProcessBarrier setup() lays out registers with the cell's registry.
  const LockRegistry::RegistrationScope registering(s.block->locks, s.arena->base(), s.arena->capacity());
  ScenarioExecutor::instance().call(cell, cell.deadline_s, fmt::format("{}'s setup()", cell.scenario),
                                    wants_gdb_stacks(cell),
                                    [scenario = s.scenario, arena = s.arena, config = s.config,
                                     dir = s.private_dir.path()] {
                                      SetupContext setup(*config, *arena, dir);
                                      scenario->setup(setup);
                                    });
}

// Launches the workers and supervises them until every one is reaped; `wait_for` is the wait-for
// graph read while hung workers were frozen.
Supervision launch_and_supervise(RepetitionState& s, const ProgressSink& progress,
                                 std::optional<WaitForReport>& wait_for) {
  const CellConfig& cell = *s.config;
  const auto launcher = make_launcher(cell.start);
  auto group = launcher->launch(cell, *s.arena);
  std::function<void(double)> on_tick;
  if (progress) {
    on_tick = [&](double quiet_s) {
      CellProgress p;
      for (int r = 0; r < s.block->procs; ++r) p.steps_done += s.block->slots[r].steps.load(std::memory_order_relaxed);
      p.steps_total = cell.command.empty() ? cell.workload.steps * cell.procs : 0;
      p.quiet_s = quiet_s;
      p.hang_timeout_s = cell.hang_timeout_s;
      progress(p);
    };
  }
  WatchdogLimits limits{cell.hang_timeout_s, cell.deadline_s,
                        wants_gdb_stacks(cell) && !s.info->opted_out("stacks", cell.variant)};
  limits.launch_deadline_s = launch_deadline_s(cell.start, cell.procs, usable_cores(), cell.hang_timeout_s);
  // Every 100 ms: often enough for a short cell to have a few samples (a walk of smaps_rollup costs
  // about 3 ms with LibTorch mapped, 3 % of a core). A worker running a command is sampled every 2 s.
  limits.memory_interval_s = cell.command.empty() ? 0.1 : 2.0;
  return supervise(*group, *s.block, limits,
                   [&] {
                     wait_for = describe_wait_for(*s.block);
                     s.scenario->before_teardown(*s.arena);
                   },
                   s.faults ? &*s.faults : nullptr, on_tick);
}

// The scenario's check(), on a copy of the repetition that stays its own if it never returns.
void run_scenario_check(const RepetitionState& s, Repetition& rep) {
  const CellConfig& cell = *s.config;
  auto checked = std::make_shared<Repetition>(rep);
  try {
    ScenarioExecutor::instance().call(cell, cell.deadline_s, fmt::format("{}'s check()", cell.scenario),
                                      wants_gdb_stacks(cell),
                                      [scenario = s.scenario, arena = s.arena, config = s.config, checked] {
                                        CheckContext check(*config, *arena, *checked);
                                        scenario->check(check);
                                      });
    rep = *checked;
  } catch (const CallTimedOut& e) {
    rep.status = RunStatus::kSetupTimeout;
    rep.status_message = e.what();
    rep.checks.push_back(Check{checks::kChecker, Verdict::kFail, std::nullopt, e.what()});
  } catch (const std::exception& e) {
    rep = *checked;
    rep.checks.push_back(Check{checks::kChecker, Verdict::kUnknown, std::nullopt,
                               fmt::format("the scenario's checker threw: {}", e.what())});
  }
}

// Setup, workers, check(), and the detectors that read the arena; false when the scenario could
// not run here (rep is then skipped).
bool run_workers_and_checks(RepetitionState& s, const ProgressSink& progress, RepetitionEvidence& evidence,
                            Repetition& rep) {
  if (auto reason = s.scenario->unavailable()) {
    rep.status = RunStatus::kSkipped;
    rep.status_message = *reason;
    rep.verdict = Verdict::kUnknown;
    return false;
  }
  run_setup(s);
  const std::int64_t launch_ns = monotonic_ns();
  std::optional<WaitForReport> wait_for;
  const Supervision sup = launch_and_supervise(s, progress, wait_for);
  rep.status = sup.status;
  rep.status_message = sup.message;
  rep.wall_s = sup.wall_s;
  record_workers(sup, *s.block, launch_ns, rep);  // may downgrade a completed run: see there
  evidence.worker_fd_leaks = worker_descriptor_leaks(*s.block);
  if (wait_for && wait_for->any_wait) rep.status_message += "; " + wait_for->text;
  // Every worker is gone: its sanitizer reports, if any, are complete. Kept when the scenario
  // opted out of the check: the race it expects.
  const SanitizerReports reports = read_sanitizer_reports(s.private_dir.path());
  rep.sanitizer_report = reports.text;
  evidence.block = s.block;
  evidence.supervision = &sup;
  evidence.sanitizer = &reports;
  evidence.faults = s.faults ? &*s.faults : nullptr;
  run_detectors(DetectorStage::kAfterWorkers, *s.info, evidence, rep);
  run_scenario_check(s, rep);
  run_detectors(DetectorStage::kAfterCheck, *s.info, evidence, rep);
  if (s.config->chaos_seed != 0) record_chaos_tally(*s.block, rep);
  evidence.block = nullptr;  // what follows outlives the arena
  evidence.supervision = nullptr;
  evidence.sanitizer = nullptr;
  evidence.faults = nullptr;
  return true;
}

}  // namespace

Repetition run_repetition(const PlannedCell& planned, int index, const ProgressSink& progress) {
  Repetition rep;
  rep.index = index;
  CellConfig cell = planned.config;
  cell.repetition = index;
  const ScenarioInfo* info = ScenarioRegistry::instance().find(cell.scenario);
  mark_runner_process();
  const ResourceSnapshot resources_before = take_resource_snapshot();
  RepetitionEvidence evidence;
  evidence.cell = &cell;
  try {
    if (!info) throw std::runtime_error(fmt::format("scenario '{}' is not registered", cell.scenario));
    RepetitionState state;
    state.config = std::make_shared<const CellConfig>(cell);
    state.info = info;
    state.scenario = info->create(cell);
    if (!run_workers_and_checks(state, progress, evidence, rep)) {
      judge_against(planned.expected, rep);
      return rep;
    }
  } catch (const CallTimedOut& e) {
    rep.status = RunStatus::kSetupTimeout;
    rep.status_message = e.what();
    rep.checks.push_back(Check{checks::kSetup, Verdict::kFail, std::nullopt, e.what()});
  } catch (const std::exception& e) {
    rep.status = RunStatus::kError;
    rep.status_message = e.what();
    rep.checks.push_back(Check{checks::kSetup, Verdict::kUnknown, std::nullopt, e.what()});
  }
  // The arena, the scenario and every worker are gone by now: whatever remains is a leak. A process
  // left behind is reported, then killed: a run never leaves one.
  const ResourceSnapshot resources_after = take_settled_snapshot(resources_before);
  evidence.resources_before = &resources_before;
  evidence.resources_after = &resources_after;
  if (info) {
    run_detectors(DetectorStage::kAfterTeardown, *info, evidence, rep);
  } else {
    rep.checks.push_back(compare_resources(resources_before, resources_after, evidence.worker_fd_leaks));
  }
  kill_leftover_processes(resources_before, resources_after);
  remove_leftover_segments(resources_before, resources_after);
  const std::vector<std::string>& disabled = cell.disabled_checks;
  for (const Check& c : rep.checks) {
    if (std::find(disabled.begin(), disabled.end(), c.name) != disabled.end()) rep.disabled_dropped.push_back(c.name);
  }
  rep.checks.erase(std::remove_if(rep.checks.begin(), rep.checks.end(),
                                  [&](const Check& c) {
                                    return std::find(disabled.begin(), disabled.end(), c.name) != disabled.end();
                                  }),
                   rep.checks.end());
  give_every_check_an_exposure(rep);
  mark_unexercised_checks(rep.checks);
  rep.verdict = overall_verdict(rep.checks);
  judge_against(planned.expected, rep);
  return rep;
}

}  // namespace sharebench
