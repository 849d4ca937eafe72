// `sharebench run`: plan the matrix, start the forkserver while the process is still clean, run
// every cell, write the results and print the report. Every flag that changes a cell comes from
// the table in harness/plan/cell_flags.h, so the reproduce lines can write it back.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "cli/commands.h"
#include "harness/util/terminal.h"
#include "harness/util/text.h"
#include "harness/launch/forkserver.h"
#include "harness/launch/launcher.h"
#include "harness/results/results_json.h"
#include "harness/results/run_directory.h"
#include "harness/util/interrupt.h"
#include "harness/plan/matrix.h"
#include "harness/plan/resource_limits.h"
#include "harness/runner/runner.h"
#include "harness/plan/cell_flags.h"
#include "harness/watchdog/process_probe.h"
#include "reports/console_report.h"
#include "reports/report_writers.h"

namespace sharebench::cli {

namespace {
struct RunFlags {
  std::vector<std::string> scenarios, starts, procs, formats{"console"};
  MatrixRequest request;
  AutoRepetitions automatic;  // --repetitions auto
  BlockPolicy block_policy;   // --blocks
  std::string out, repetitions = "1", blocks, budget, interval, tie_margin, shard;
  ConsoleChoice console;
  CellFlagValues cell_values;
};

// --shard K/N, else GTEST_SHARD_INDEX (0-based) and GTEST_TOTAL_SHARDS, as Google Test shards.
ShardInfo parse_shard(const std::string& text) {
  ShardInfo s;
  if (!text.empty()) {
    const auto slash = text.find('/');
    if (slash == std::string::npos) throw UsageError(fmt::format("--shard must be K/N (1 <= K <= N), got '{}'", text));
    s.total = static_cast<int>(parse_flag_int("--shard N", text.substr(slash + 1), 1, 10000));
    s.index = static_cast<int>(parse_flag_int("--shard K", text.substr(0, slash), 1, s.total));
    return s;
  }
  const char* index = std::getenv("GTEST_SHARD_INDEX");
  const char* total = std::getenv("GTEST_TOTAL_SHARDS");
  if (index && total && *index && *total) {
    s.total = static_cast<int>(parse_flag_int("GTEST_TOTAL_SHARDS", total, 1, 10000));
    s.index = static_cast<int>(parse_flag_int("GTEST_SHARD_INDEX", index, 0, s.total - 1)) + 1;
  }
  return s;
}
// --blocks auto (the default), N or 0, and the --budget that auto runs within.
void parse_blocks(RunFlags& f) {
  BlockPolicy& b = f.block_policy;
  b.enabled = f.blocks != "0";
  b.adaptive = f.blocks.empty() || f.blocks == "auto";
  if (!b.adaptive) b.min_blocks = static_cast<int>(parse_flag_int("--blocks", f.blocks, 0, 1000));
  if (!f.budget.empty()) {
    if (!b.enabled || !b.adaptive) throw UsageError("--budget needs --blocks auto or --repetitions auto");
    b.budget_s = parse_flag_duration("--budget", f.budget, 1, 7 * 24 * 3600);
    b.max_blocks = 1000;  // a budget of one's own: as many blocks as it holds
  }
}
}  // namespace

std::function<int()> add_run_command(CLI::App& app, int argc, char** argv) {
  CLI::App* cmd = app.add_subcommand("run", "run a matrix of cells (default: every CPU scenario x fork, spawn, "
                                            "forkserver x 1 and 2 processes)");
  auto f = std::make_shared<RunFlags>();
  cmd->add_option("--scenario", f->scenarios, "scenarios or scenario/variant names, comma-separated")
      ->delimiter(',')
      ->type_name("NAME");
  cmd->add_option("--start", f->starts, "start methods: fork, spawn, forkserver, thread")->delimiter(',')->type_name("METHOD");
  cmd->add_option("--procs", f->procs, "process counts, comma-separated (1..64)")->delimiter(',')->type_name("INT");
  cmd->add_flag("--known-bugs", f->request.known_bugs, "run the known-bug variants (with the scenarios named, or all)");
  cmd->add_option("--repetitions", f->repetitions,
                  "repetitions of each cell (1..1000), or auto: repeat each cell that can be ranked until its "
                  "throughput's 95 % interval is within --interval, or the --budget runs out")
      ->capture_default_str()
      ->type_name("N|auto");
  cmd->add_option("--blocks", f->blocks,
                  "ranking blocks after the first pass: in each, every strategy that can be ranked runs once in a fresh "
                  "random order and the fastest twice (an A/A control); auto (the default): at least 5 per group, more "
                  "until its leader is told apart, within --budget; N: exactly N; 0: none (not with --repetitions auto "
                  "or --shard)")
      ->type_name("auto|N|0");
  cmd->add_option("--budget", f->budget,
                  "time for the whole run (90s, 10m, 1h): with --blocks auto (default 4m) or --repetitions auto "
                  "(default 10m)")
      ->type_name("DURATION");
  cmd->add_option("--interval", f->interval,
                  "with --repetitions auto: the 95 % interval's half-width to reach, in % of the mean (default 5)")
      ->type_name("PERCENT");
  cmd->add_option("--tie-margin", f->tie_margin,
                  "strategies whose mean throughput is within this % of the fastest's are tied with it even when "
                  "their intervals part: in blocks, instead of the A/A control's measured margin; with --repetitions "
                  "auto or fixed repetitions, the drift from one run to the next (default 12, measured on a 2-core VM); "
                  "0: intervals alone")
      ->type_name("PERCENT");
  add_cell_flag_options(*cmd, f->cell_values, CellConfig{}, false);
  cmd->add_option("--shard", f->shard,
                  "run every N-th cell of the matrix, starting at the K-th (K/N, 1-based); GTEST_SHARD_INDEX and "
                  "GTEST_TOTAL_SHARDS are honoured too; join the shards' results with `sharebench merge`")
      ->type_name("K/N");
  cmd->add_option("--out", f->out, "write results into this directory (default: runs/<id>, linked as runs/latest)")
      ->type_name("DIR");
  add_format_option(*cmd, f->formats, true, "the run directory");
  add_console_options(*cmd, f->console);

  return [f, argc, argv] {
    f->request.scenarios = f->scenarios;
    f->request.starts = f->starts;
    ShardInfo shard;
    std::vector<PlannedCell> cells;
    try {
      for (const std::string& p : f->procs) {
        f->request.procs.push_back(static_cast<int>(parse_flag_int("--procs", p, 1, kMaxProcs)));
      }
      if (!f->tie_margin.empty()) {
        f->automatic.tie_margin = parse_flag_double("--tie-margin", f->tie_margin, 0, 50) / 100;
        f->block_policy.tie_margin = f->automatic.tie_margin;
        f->block_policy.tie_margin_given = true;
      }
      if (f->repetitions == "auto") {
        f->automatic.enabled = true;
        if (!f->blocks.empty()) throw UsageError("--blocks and --repetitions auto are two ways to repeat: choose one");
        if (!f->budget.empty()) f->automatic.budget_s = parse_flag_duration("--budget", f->budget, 1, 7 * 24 * 3600);
        if (!f->interval.empty()) f->automatic.target = parse_flag_double("--interval", f->interval, 0.1, 50) / 100;
      } else {
        f->request.repetitions = static_cast<int>(parse_flag_int("--repetitions", f->repetitions, 1, kMaxRepetitions));
        if (!f->interval.empty()) throw UsageError("--interval needs --repetitions auto");
        parse_blocks(*f);
      }
      apply_cell_flags(f->cell_values, f->request.base);
      if (f->request.base.stacks == "gdb" && !gdb_available()) throw UsageError("--stacks gdb: gdb is not installed");
      // CLI11 takes an empty value as none at all, and drops the empty elements of a list
      // ("1,,2" is 1,2): look at the words themselves.
      for (int i = 1; i < argc; ++i) {
        const std::string word = argv[i];
        if (word == "--out=" || (word == "--out" && (i + 1 >= argc || argv[i + 1][0] == '\0'))) {
          throw UsageError("--out must name a directory, got ''");
        }
        for (const char* list : {"--procs", "--scenario", "--start", "--format", "--disable-check"}) {
          std::string value;
          if (word == list && i + 1 < argc) value = argv[i + 1];
          else if (word.rfind(std::string(list) + "=", 0) == 0) value = word.substr(std::string(list).size() + 1);
          else continue;
          if (value.empty() || value.front() == ',' || value.back() == ',' || value.find(",,") != std::string::npos) {
            throw UsageError(fmt::format("{} must be a comma-separated list without empty elements, got '{}'", list, value));
          }
        }
      }
      shard = parse_shard(f->shard);
      if (shard.total > 1) {  // a shard holds part of each group: nothing to rank against
        if (!f->blocks.empty() && f->blocks != "0") throw UsageError("--blocks cannot rank a --shard: run --blocks 0");
        f->block_policy.enabled = false;
      }
      // One of several torchrun nodes (averaging's Gloo cells span them): every node must run the
      // same cells in the same order, and each block's order is drawn at random, its end decided
      // from the node's own figures.
      const char* world = std::getenv("WORLD_SIZE");
      if (f->block_policy.enabled && world && std::atoi(world) > 1) {
        if (!f->blocks.empty()) throw UsageError("--blocks cannot rank across torchrun nodes (WORLD_SIZE > 1): run --blocks 0");
        f->block_policy.enabled = false;
        std::fprintf(stderr, "sharebench: no ranking blocks: this is one of WORLD_SIZE=%d torchrun nodes, which must run the "
                             "same cells in the same order\n", std::atoi(world));
      }
      cells = plan_matrix(f->request);
      shard.planned_cells = cells.size();
      cells = shard_cells(cells, shard.index, shard.total);
      ensure_resource_limits(resource_needs(cells));  // before LibTorch's pools and the forkserver
    } catch (const UsageError& e) {
      return usage_error(e.what());
    }
    if (cells.empty()) {
      std::fprintf(stderr, "sharebench: shard %d/%d holds none of the %zu cells; nothing to run\n", shard.index,
                   shard.total, shard.planned_cells);
    }
    RunnerOptions options;
    options.cells = std::move(cells);
    options.repetitions = f->request.repetitions;
    options.auto_repetitions = f->automatic;
    options.blocks = f->block_policy;
    options.out_dir = absolute_out_dir(f->out);
    options.command.assign(argv, argv + argc);
    options.shard = shard;
    return run_and_report(std::move(options), f->formats, f->console, f->request.base);
  };
}

// A --disable-check name that dropped no check in any cell is most likely misspelt: the check it
// meant ran all the same. Said on stderr, with the closest name the run had, after the run.
void warn_of_checks_disabled_in_vain(const RunResult& run, const std::vector<std::string>& disabled) {
  std::set<std::string> dropped, present;
  for (const CellResult& c : run.cells) {
    for (const Repetition& r : c.repetitions) {
      dropped.insert(r.disabled_dropped.begin(), r.disabled_dropped.end());
      for (const Check& k : r.checks) present.insert(k.name);
    }
  }
  const std::vector<std::string> known(present.begin(), present.end());
  for (const std::string& name : disabled) {
    if (dropped.count(name) || run.cells.empty()) continue;
    const std::string guess = closest_name(name, known);
    std::fprintf(stderr, "sharebench: warning: --disable-check %s: no cell had a check of that name%s\n", name.c_str(),
                 guess.empty() ? "" : fmt::format(" (did you mean {}?)", guess).c_str());
  }
}

int run_and_report(RunnerOptions options, const std::vector<std::string>& formats, const ConsoleChoice& console,
                   const CellConfig& base) {
  // The forkserver must be forked while this process has no threads and LibTorch is untouched.
  for (const PlannedCell& c : options.cells) {
    if (c.config.start == StartMethod::kForkserver) {
      ForkServer::instance().start();
      break;
    }
  }
  install_interrupt_handlers();
  run_runner_init_hook(base);
  options.progress = terminal::is_interactive(stderr);
  const std::optional<RunOutcome> ran = run_matrix_then_stop_forkserver(options);
  if (!ran) return kExitUsage;
  const RunOutcome& outcome = *ran;
  warn_of_checks_disabled_in_vain(outcome.result, base.disabled_checks);

  const std::string dir = outcome.results_path.substr(0, outcome.results_path.rfind('/'));
  // A signal while the reports are written stops the writing (each file is whole or absent: written
  // atomically) and is the exit code, as at any other moment; results.json is already complete.
  for (const std::string& format : formats) {
    if (interrupt_requested()) break;
    for (const std::string& written : write_reports(outcome.result, {format}, dir)) {
      std::fprintf(stderr, "wrote %s\n", written.c_str());
    }
  }
  const RenderOptions render = console.render(STDOUT_FILENO);
  for (const std::string& format : formats) {
    if (interrupt_requested()) break;
    print_reports(outcome.result, {format}, render, stdout);
    if (format == "console") std::printf("results: %s\n", outcome.results_path.c_str());
  }
  std::fflush(stdout);
  if (interrupt_requested() && outcome.exit_code < 128) return interrupted_exit_code();
  return outcome.exit_code;
}

}  // namespace sharebench::cli
