// Runner: cells × repetitions, one after another, the results file rewritten after every cell
// (one repetition: repetition.cc).
#include "harness/runner/runner.h"
#include "harness/util/text.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <functional>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "harness/plan/cell_flags.h"
#include "harness/env/environment.h"
#include "harness/env/machine_load.h"
#include "harness/proc/leak_check.h"
#include "harness/results/recommendation.h"
#include "harness/results/results_json.h"
#include "harness/results/run_directory.h"
#include "harness/housekeeping/dead_run_sweep.h"
#include "harness/runner/adaptive_repetitions.h"
#include "harness/runner/progress_line.h"
#include "harness/util/interrupt.h"

namespace sharebench {

namespace {

// A repetition of a ranked cell that timed too little work (the pilot, or one after a pilot that
// misjudged): its steps are raised for the repetitions to come, and the figures of every repetition
// it ran at fewer steps stop counting (adaptive_repetitions.h).
void calibrate(CellResult& cell, PlannedCell& planned, const AutoRepetitions& policy, const std::string& binary) {
  const std::optional<std::int64_t> steps = calibrated_steps(cell, policy);
  if (!steps) return;
  for (Repetition& r : cell.repetitions) r.calibration = true;  // figures only from repetitions at one steps
  planned.config.workload.steps = *steps;
  cell.config.workload.steps = *steps;
  cell.repro = repro_command(binary, planned.config, 1);
}

// Every cell of a group runs the same steps, the most `wanted` says any of them needs: a rate can
// depend on the steps (a reused buffer pays off over more messages), so unequal work would not
// compare. A cell raised keeps the repetitions it ran at fewer steps for their checks, not their
// figures (Repetition::calibration).
void equal_steps(const std::vector<std::vector<std::size_t>>& groups, std::vector<PlannedCell>& plans, RunResult& run,
                 const std::string& binary, const std::function<std::int64_t(std::size_t)>& wanted) {
  for (const std::vector<std::size_t>& group : groups) {
    std::int64_t steps = 0;
    for (std::size_t i : group) steps = std::max(steps, wanted(i));
    for (std::size_t i : group) {
      CellResult& cell = run.cells[i];
      if (cell.config.workload.steps == steps) continue;
      for (Repetition& r : cell.repetitions) r.calibration = true;
      plans[i].config.workload.steps = cell.config.workload.steps = steps;
      cell.repro = repro_command(binary, plans[i].config, 1);
    }
  }
}

// The cells each ranking group holds (kind, processes, model, batch: harness/results/recommendation.h),
// by index: every start method of every strategy that qualified.
std::vector<std::vector<std::size_t>> ranking_groups(const RunResult& run, const AutoRepetitions& policy) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < run.cells.size(); ++i) index[run.cells[i].config.id()] = i;
  std::vector<std::vector<std::size_t>> out;
  for (const RankingGroup& g : recommend_cells(run.cells, policy.target, policy.tie_margin).groups) {
    out.emplace_back();
    for (const RankedCell& r : g.ranked) out.back().push_back(index.at(r.cell));
  }
  return out;
}

// --repetitions auto after every pilot: one repetition at a time to the cell that needs it most,
// every cell of a group at the same steps (raised together when one of them needs more).
void settle_cells(std::vector<PlannedCell>& plans, RunResult& run, const AutoRepetitions& policy, const std::string& binary,
                  const std::chrono::steady_clock::time_point started, ProgressLine& line, const ProgressSink& sink,
                  const std::function<void()>& save) {
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  const auto current = [&](std::size_t i) { return run.cells[i].config.workload.steps; };
  equal_steps(ranking_groups(run, policy), plans, run, binary, current);  // each pilot calibrated its own
  save();
  std::size_t extra = 0;
  while (!interrupt_requested()) {
    const std::optional<std::size_t> next = next_repetition(run.cells, policy, elapsed());
    if (!next) break;
    CellResult& cell = run.cells[*next];
    const std::size_t unsettled = unsettled_cells(run.cells, policy).size();
    line.cell(run.cells.size(), fmt::format("{} rep {} (auto: {} not settled, {:.0f} s of budget left)", cell.config.id(),
                                            cell.repetitions.size() + 1, unsettled, policy.budget_s - elapsed()));
    cell.repetitions.push_back(run_repetition(plans[*next], static_cast<int>(cell.repetitions.size()), sink));
    calibrate(cell, plans[*next], policy, binary);
    equal_steps(ranking_groups(run, policy), plans, run, binary, current);  // raised: its group with it
    ++extra;
    save();
  }
  const std::vector<std::string> unsettled = unsettled_cells(run.cells, policy);
  run.repetitions.budget_ran_out = !unsettled.empty() && !interrupt_requested();
  line.clear();
  const std::string how = unsettled.empty() ? std::string("every ranked cell settled")
                                            : fmt::format("{} ranked cells did not settle within {:.0f} % of their mean",
                                                          unsettled.size(), policy.target * 100);
  std::fprintf(stderr, "sharebench: --repetitions auto: %zu repetitions after the pilots, %.0f s in all; %s\n", extra,
               elapsed(), how.c_str());
}

// Ranking blocks after the first pass (ranking_blocks.h): the contenders' steps raised first where
// their first-pass repetition timed too little, then block after block.
void rank_in_blocks(std::vector<PlannedCell>& plans, RunResult& run, const BlockPolicy& policy, const std::string& binary,
                    const std::chrono::steady_clock::time_point started, ProgressLine& line, const ProgressSink& sink,
                    const std::function<void()>& save, bool interactive) {
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  // The least timed work a block's repetition does is --repetitions auto's; every contender of a
  // group then runs the same steps, the most any of them needs.
  const AutoRepetitions timing;
  equal_steps(block_groups(run.cells, policy.tie_margin), plans, run, binary, [&](std::size_t i) {
    return calibrated_steps(run.cells[i], timing).value_or(run.cells[i].config.workload.steps);
  });
  save();
  const RunInBlock run_one = [&](std::size_t i, int block, bool control) {
    CellResult& cell = run.cells[i];
    line.cell(run.cells.size(), fmt::format("{} block {}{}", cell.config.id(), block + 1, control ? " (A/A)" : ""));
    Repetition rep = run_repetition(plans[i], static_cast<int>(cell.repetitions.size()), sink);
    rep.block = block;
    rep.control = control;
    cell.repetitions.push_back(std::move(rep));
    save();
  };
  const BlockNews news = [&](const std::string& what) {
    if (!interactive) std::fprintf(stderr, "sharebench: %s, %.0f s in\n", what.c_str(), elapsed());
  };
  const BlocksRan ran = run_ranking_blocks(run.cells, policy, run_one, elapsed, news);
  run.repetitions.budget_ran_out = ran.budget_ran_out;
  run.repetitions.blocks_ran = ran.rounds;
  if (interrupt_requested()) {
    // Ctrl-C in the middle of a block: that block is incomplete (some contenders ran it, one was cut
    // short), so none of its repetitions count. The blocks that completed, and each cell's own
    // verdicts from them, stand.
    for (const auto& group : ran.completed) {
      const int completed = group.second;
      for (std::size_t i : group.first) {
        auto& reps = run.cells[i].repetitions;
        reps.erase(std::remove_if(reps.begin(), reps.end(), [completed](const Repetition& r) { return r.block >= completed; }),
                   reps.end());
      }
    }
    save();
  }
  line.clear();
  if (ran.groups == 0) return;
  std::fprintf(stderr, "sharebench: ranking blocks: %s over %s, %zu repetitions, %.0f s in all%s\n",
               counted(ran.rounds, "block", "blocks").c_str(), counted(static_cast<long long>(ran.groups), "group", "groups").c_str(),
               ran.repetitions, elapsed(), ran.budget_ran_out ? "; the budget ended before every leader was told apart" : "");
}

}  // namespace

namespace {
// Writes results.json. On a full disk (or a folder gone bad) the space held back at the start
// takes the last word, a valid results file that says the run stopped and why; then the run stops
// with one line (OutputPathError).
void save_results(const RunDirectory& dir, RunResult& run, std::size_t done, std::size_t planned) {
  try {
    dir.write_atomically("results.json", dump_json(results_to_json(run), 1) + "\n");
  } catch (const OutputPathError& e) {
    if (!dir.release_reserve()) throw;
    run.status = "error";
    run.stop_reason = fmt::format("stopped after {} of {} cells: {}", done, planned, e.what());
    run.finished_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
    dir.write_atomically("results.json", dump_json(results_to_json(run), 1) + "\n");
    throw OutputPathError(fmt::format("{}; the run stopped after {} of {} cells, saved in {}", e.what(), done, planned,
                                      dir.file("results.json")));
  }
}
// What results.json records of how the cells were repeated: --repetitions (N or auto), --blocks.
RepetitionPolicy repetition_policy_of(const RunnerOptions& options) {
  const AutoRepetitions& policy = options.auto_repetitions;
  RepetitionPolicy p = policy.enabled ? RepetitionPolicy{true, policy.min_repetitions, policy.target, policy.budget_s,
                                                         policy.min_timed_s, false, policy.tie_margin}
                                      : RepetitionPolicy{false, options.repetitions, 0, 0, 0, false, policy.tie_margin};
  const BlockPolicy& blocks = options.blocks;
  p.tie_margin_given = blocks.tie_margin_given;
  if (blocks.enabled && !policy.enabled) {
    p.blocks = true;
    p.blocks_adaptive = blocks.adaptive;
    p.blocks_min = blocks.min_blocks;
    p.blocks_max = blocks.adaptive ? blocks.max_blocks : blocks.min_blocks;
    p.budget_s = blocks.adaptive ? blocks.budget_s : 0;
    p.min_timed_s = AutoRepetitions{}.min_timed_s;
    p.blocks_ran = 0;  // until the blocks run: an interrupt before them ranked in none
  }
  return p;
}

// A new run's results before any cell: its id, command, machine and policies.
RunResult run_header(const RunnerOptions& options) {
  RunResult run;
  run.run_id = fmt::format("{}-{}", utc_now("%Y%m%d-%H%M%S"), ::getpid());
  run.started_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
  run.command = options.command;
  run.environment = collect_environment();
  run.shard = options.shard;
  if (!options.cells.empty()) {
    run.environment["threads_per_worker"] = std::to_string(options.cells.front().config.workload.threads_per_worker);
  }
  run.readable_results = options.readable_results;
  run.repetitions = repetition_policy_of(options);
  return run;
}

}  // namespace

RunOutcome run_matrix(const RunnerOptions& options) {
  // What a runner killed by SIGKILL could not remove is reclaimed before anything of this run is made.
  if (const SweptRuns swept = sweep_dead_runs(); !swept.empty()) {
    std::fprintf(stderr, "sharebench: %s\n", swept.summary().c_str());
  }
  RunOutcome out;
  RunResult& run = out.result;
  run = run_header(options);
  // A program's output (exec) may hold what it printed of its secrets: the owner's alone, unless
  // asked otherwise (exec --readable-results).
  const bool owner_only = !options.readable_results && std::any_of(options.cells.begin(), options.cells.end(),
                                                                   [](const PlannedCell& c) { return !c.config.command.empty(); });
  const RunDirectory dir = RunDirectory::create(options.out_dir, options.runs_root, run.run_id, owner_only);
  out.results_path = dir.file("results.json");
  std::size_t done = 0;
  const std::function<void()> save = [&] { save_results(dir, run, done, options.cells.size()); };
  save();  // evidence from the start: an empty run that says it is running
  const LoadSnapshot load_before = take_load_snapshot();  // measurement conditions: machine_load.h

  const std::string binary = options.command.empty() ? "sharebench" : options.command.front();
  const AutoRepetitions& policy = options.auto_repetitions;
  const BlockPolicy& blocks = options.blocks;
  const int first_repetitions = policy.enabled ? 1 : options.repetitions;  // auto: the pilots first
  const auto started = std::chrono::steady_clock::now();
  std::vector<PlannedCell> plans = options.cells;
  ProgressLine line(options.cells.size(), options.progress);
  const ProgressSink sink = [&](const CellProgress& p) { line.tick(p); };
  for (PlannedCell& planned : plans) {
    if (interrupt_requested()) break;
    CellResult cell;
    cell.config = planned.config;
    cell.kind = planned.kind;
    cell.expected = planned.expected;
    cell.known_bug = planned.known_bug;
    cell.repro = repro_command(binary, planned.config, first_repetitions);
    for (int i = 0; i < first_repetitions && !interrupt_requested(); ++i) {
      std::string what = planned.config.id();
      if (first_repetitions > 1) what += fmt::format(" rep {}/{}", i + 1, first_repetitions);
      line.cell(done, what);
      cell.repetitions.push_back(run_repetition(planned, i, options.progress ? sink : ProgressSink{}));
    }
    if (policy.enabled) calibrate(cell, planned, policy, binary);
    run.cells.push_back(std::move(cell));
    ++done;
    save();
  }
  if (policy.enabled) {
    plans.resize(run.cells.size());
    settle_cells(plans, run, policy, binary, started, line, options.progress ? sink : ProgressSink{}, save);
  } else if (run.repetitions.blocks && !interrupt_requested()) {
    plans.resize(run.cells.size());
    rank_in_blocks(plans, run, blocks, binary, started, line, options.progress ? sink : ProgressSink{}, save, options.progress);
  }
  line.clear();

  run.finished_at = utc_now("%Y-%m-%dT%H:%M:%SZ");
  for (auto& [key, value] : conditions_as_facts(
           measurement_conditions(load_before, take_load_snapshot(), {::getpid(), forkserver_pid()}))) {
    run.environment[key] = value;
  }
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
  dir.release_reserve();  // its work is done
  return out;
}

}  // namespace sharebench
