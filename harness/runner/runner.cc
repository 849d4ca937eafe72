// Runner: cells × repetitions, one after another, the results file rewritten after every cell
// (one repetition: repetition.cc).
#include "harness/runner/runner.h"

#include <unistd.h>

#include <ctime>

#include <fmt/format.h>

#include "harness/plan/cell_flags.h"
#include "harness/env/environment.h"
#include "harness/env/machine_load.h"
#include "harness/proc/leak_check.h"
#include "harness/results/results_json.h"
#include "harness/results/run_directory.h"
#include "harness/housekeeping/dead_run_sweep.h"
#include "harness/runner/progress_line.h"
#include "harness/util/interrupt.h"

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

}  // namespace

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
  const LoadSnapshot load_before = take_load_snapshot();  // measurement conditions: machine_load.h

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
  return out;
}

}  // namespace sharebench
