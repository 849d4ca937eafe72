// `sharebench run`: plan the matrix, start the forkserver while the process is still clean, run
// every cell, write the results and print the report.
#include <unistd.h>

#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.h"
#include "harness/launch/forkserver.h"
#include "harness/launch/launcher.h"
#include "harness/results/results_json.h"
#include "harness/results/run_directory.h"
#include "harness/runner/interrupt.h"
#include "harness/runner/matrix.h"
#include "harness/runner/runner.h"
#include "harness/watchdog/process_probe.h"
#include "reports/console_report.h"
#include "reports/report_writers.h"

namespace sharebench::cli {

namespace {
struct RunFlags {
  std::vector<std::string> scenarios, starts, formats{"console"};
  std::vector<int> procs;
  MatrixRequest request;
  std::string out;
  int arena_mb = 256;
  std::string stacks = "auto";
  std::vector<std::string> disabled_checks;
  std::string fault;
};
}  // namespace

std::function<int()> add_run_command(CLI::App& app, int argc, char** argv) {
  CLI::App* cmd = app.add_subcommand("run", "run a matrix of cells (default: every CPU scenario x fork, spawn, "
                                            "forkserver x 1 and 2 processes)");
  auto f = std::make_shared<RunFlags>();
  CellConfig& base = f->request.base;
  WorkloadOptions& w = base.workload;
  cmd->add_option("--scenario", f->scenarios, "scenarios or scenario/variant names, comma-separated")->delimiter(',');
  cmd->add_option("--start", f->starts, "start methods: fork, spawn, forkserver, thread")->delimiter(',');
  cmd->add_option("--procs", f->procs, "process counts, comma-separated")->delimiter(',');
  cmd->add_flag("--known-bugs", f->request.known_bugs, "run the known-bug variants (with the scenarios named, or all)");
  cmd->add_option("--steps", w.steps, "training steps per worker")->capture_default_str();
  cmd->add_option("--repetitions", f->request.repetitions, "repetitions of each cell")->capture_default_str();
  cmd->add_option("--seed", w.seed, "seed for data and initial weights")->capture_default_str();
  cmd->add_option("--batch", w.batch, "batch size")->capture_default_str();
  cmd->add_option("--lr", w.lr, "SGD learning rate")->capture_default_str();
  cmd->add_option("--momentum", w.momentum, "SGD momentum (its buffers are shared too)")->capture_default_str();
  cmd->add_option("--hidden", w.hidden, "width of the two hidden layers")->capture_default_str();
  cmd->add_option("--threads", w.threads_per_worker, "intra-op threads per worker")->capture_default_str();
  cmd->add_option("--average-every", w.average_every, "averaging: steps between parameter-averaging rounds")
      ->capture_default_str();
  cmd->add_option("--step-delay-us", w.step_delay_us, "pause after every step (slows a run on purpose)")
      ->capture_default_str();
  cmd->add_option("--hang-timeout", base.hang_timeout_s, "seconds without progress that make a hang")->capture_default_str();
  cmd->add_option("--deadline", base.deadline_s, "seconds a cell repetition may take in all")->capture_default_str();
  cmd->add_option("--fault", f->fault,
                  "inject a fault into every cell, KIND:RANK@STEP: kill:1@20 (SIGKILL rank 1 at its step 20), "
                  "kill-holding-lock:0@5 (SIGKILL while it holds a lock), stall:1@10+3 (SIGSTOP for 3 s)");
  cmd->add_option("--arena-mb", f->arena_mb, "shared arena capacity per cell, MiB (reserved sparsely)")
      ->capture_default_str()->check(CLI::Range(1, 65536));
  cmd->add_option("--stacks", f->stacks, "stacks of hung workers: gdb, proc (/proc only), auto (gdb when installed)")
      ->check(CLI::IsMember({"auto", "gdb", "proc"}))->capture_default_str();
  cmd->add_option("--disable-check", f->disabled_checks,
                  "detector self-test: drop these checks from the results, as if switched off; a planted bug "
                  "only they catch then fails the run")
      ->delimiter(',');
  cmd->add_option("--out", f->out, "write results into this directory (default: runs/<id>, linked as runs/latest)");
  cmd->add_option("--format", f->formats,
                  "console and json print to stdout; md, html, csv, junit, gbench are written into the run "
                  "directory; none prints nothing")
      ->delimiter(',')
      ->check(CLI::IsMember({"console", "json", "none", "md", "html", "csv", "junit", "gbench"}))
      ->capture_default_str();

  return [f, argc, argv] {
    f->request.scenarios = f->scenarios;
    f->request.starts = f->starts;
    f->request.procs = f->procs;
    if (f->stacks == "gdb" && !gdb_available()) return usage_error("--stacks gdb: gdb is not installed");
    try {
      f->request.base.fault = FaultPlan::parse(f->fault);
    } catch (const std::invalid_argument& e) {
      return usage_error(std::string("--fault: ") + e.what());
    }
    std::vector<PlannedCell> cells;
    try {
      cells = plan_matrix(f->request);
    } catch (const UsageError& e) {
      return usage_error(e.what());
    }
    // The forkserver must be forked while this process has no threads and LibTorch is untouched.
    for (const PlannedCell& c : cells) {
      if (c.config.start == StartMethod::kForkserver) {
        ForkServer::instance().start();
        break;
      }
    }
    install_interrupt_handlers();
    run_runner_init_hook(f->request.base);

    RunnerOptions options;
    options.cells = std::move(cells);
    options.repetitions = f->request.repetitions;
    options.out_dir = f->out;
    options.arena_bytes = static_cast<std::size_t>(f->arena_mb) << 20;
    options.command.assign(argv, argv + argc);
    options.progress = ::isatty(STDERR_FILENO) != 0;
    options.disabled_checks = f->disabled_checks;
    options.gdb_stacks = f->stacks == "gdb" || (f->stacks == "auto" && gdb_available());
    const std::optional<RunOutcome> ran = run_matrix_then_stop_forkserver(options);
    if (!ran) return kExitUsage;
    const RunOutcome& outcome = *ran;

    const std::string dir = outcome.results_path.substr(0, outcome.results_path.rfind('/'));
    for (const std::string& written : write_reports(outcome.result, f->formats, dir)) {
      std::fprintf(stderr, "wrote %s\n", written.c_str());
    }
    for (const std::string& format : f->formats) {
      if (format == "console") {
        std::fputs(render_console(outcome.result, ::isatty(STDOUT_FILENO) != 0).c_str(), stdout);
        std::printf("results: %s\n", outcome.results_path.c_str());
      } else if (format == "json") {
        std::puts(results_to_json(outcome.result).dump(1).c_str());
      }
    }
    std::fflush(stdout);
    return outcome.exit_code;
  };
}

}  // namespace sharebench::cli
