// `sharebench soak`: many short cells under random faults (wings/soak/soak.h), run like any
// other matrix (results file, progress line, interrupt handling), then the figures and what the
// run left behind. Exit 0 when every cell ended as its fault says it must and nothing was left;
// 1 otherwise; 128 + the signal when interrupted (130: SIGINT).
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "wings/soak/soak_command.h"

#include "cli/commands.h"
#include "harness/util/terminal.h"
#include "reports/report_writers.h"
#include "wings/soak/soak_report.h"
#include "harness/results/results_json.h"
#include "harness/launch/forkserver.h"
#include "harness/launch/launcher.h"
#include "harness/results/run_directory.h"
#include "harness/util/interrupt.h"
#include "harness/plan/resource_limits.h"
#include "harness/proc/leak_check.h"
#include "harness/runner/runner.h"
#include "wings/soak/soak.h"

namespace sharebench::cli {

namespace {
struct SoakFlags {
  SoakOptions options;
  CellFlagValues cell_values;  // --steps, --hang-timeout, --chaos: the cell flags' own rows
  std::string out;
  std::vector<std::string> formats{"console"};
};

// The cell flags soak takes, with its own defaults: short cells, a short hang timeout.
CellConfig soak_cell_defaults() {
  const SoakOptions o;
  CellConfig c;
  c.workload.steps = o.steps;
  c.hang_timeout_s = o.hang_timeout_s;
  c.chaos_seed = o.chaos_seed;
  return c;
}

}  // namespace

// Digits only: CLI11 reads "-1" into an unsigned option as 2^64 - 1.
CLI::Validator whole_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const bool digits = !text.empty() && text.size() <= 19 &&
                            std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
        return digits ? std::string() : "'" + text + "' is not a whole number from 0 to 9999999999999999999";
      },
      "UINT");
}

static std::function<int()> add_soak_command(CLI::App& app, int argc, char** argv) {
  CLI::App* cmd = app.add_subcommand(
      "soak", "many short cells under random faults (kill, kill holding a lock, stalls); then the count of "
              "what was injected, what hung, and what was left behind");
  auto f = std::make_shared<SoakFlags>();
  cmd->add_option("--cells", f->options.cells, "cells to run")->capture_default_str();
  cmd->add_option("--seed", f->options.seed, "seed of the random plan (the same seed, the same soak)")
      ->check(whole_number())  // an unsigned option alone would take -1 as 2^64 - 1
      ->capture_default_str();
  add_cell_flag_options(*cmd, f->cell_values, soak_cell_defaults(), false, {"--steps", "--hang-timeout", "--chaos"});
  cmd->add_option("--out", f->out, "write results into this directory (default: runs/<id>)");
  add_format_option(*cmd, f->formats, true, "the run directory")
      ->description("console and json print the soak's figures to stdout; md, html, csv, junit, gbench are its "
                    "cells' reports, written into the run directory; none prints nothing");

  return [f, argc, argv] {
    std::vector<PlannedCell> cells;
    try {
      CellConfig given = soak_cell_defaults();
      apply_cell_flags(f->cell_values, given);
      f->options.steps = given.workload.steps;
      f->options.hang_timeout_s = given.hang_timeout_s;
      f->options.chaos_seed = given.chaos_seed;
      cells = plan_soak(f->options);
      ensure_resource_limits(resource_needs(cells));  // before LibTorch's pools and the forkserver
    } catch (const UsageError& e) {
      return usage_error(e.what());
    }
    const std::string mark = mark_soak_processes();  // before the forkserver: it must carry the mark too
    ForkServer::instance().start();
    install_interrupt_handlers();
    run_runner_init_hook(cells.front().config);

    for (PlannedCell& c : cells) c.config.arena_mb = 64;  // soak cells are small; stored, so repro lines keep it
    RunnerOptions options;
    options.cells = std::move(cells);
    options.out_dir = f->out;
    options.command.assign(argv, argv + argc);
    options.progress = terminal::is_interactive(stderr);
    const auto t0 = std::chrono::steady_clock::now();
    const std::optional<RunOutcome> ran = run_matrix_then_stop_forkserver(options);
    if (!ran) return kExitUsage;
    const RunOutcome& outcome = *ran;
    const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    SoakFigures figures = summarise_soak(outcome.result);
    // Exits already reaped by the runner; give a killed process's last breath a moment to clear.
    for (int i = 0; i < 20; ++i) {
      figures.leftover_processes = processes_with_mark(mark);
      if (figures.leftover_processes.empty()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    const ResourceSnapshot after = take_resource_snapshot();
    figures.leftover_segments.assign(after.shm.begin(), after.shm.end());

    const std::string dir = outcome.results_path.substr(0, outcome.results_path.rfind('/'));
    const std::string summary = render_soak_json(figures, f->options, wall_s);
    write_file_atomically(dir + "/soak.json", summary);
    for (const std::string& written : write_reports(outcome.result, f->formats, dir)) {
      std::fprintf(stderr, "wrote %s\n", written.c_str());
    }
    for (const std::string& format : f->formats) {
      if (format == "console") std::fputs(render_soak_console(figures, wall_s, outcome.results_path).c_str(), stdout);
      if (format == "json") std::fputs(summary.c_str(), stdout);
    }
    std::fflush(stdout);
    if (outcome.exit_code > 128) return outcome.exit_code;  // interrupted: 128 + the signal
    return figures.ok() ? kExitOk : kExitUnexpected;
  };
}

Command soak_command() {
  return {"soak", [](CLI::App& a, const CommandLine& l) { return add_soak_command(a, l.argc, l.argv); }, kCellsExitCodes};
}

}  // namespace sharebench::cli
