// `sharebench exec [options] -- COMMAND [ARGS...]`: a user's own program, run as cells of the
// `exec` scenario (wings/exec): one cell per --mp-start method, each repeated, supervised,
// checked and reported like any other (results.json, every report, compare, repro).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "wings/exec/exec_command.h"

#include "cli/commands.h"
#include "wings/exec/program_supervisor.h"
#include "harness/plan/matrix.h"
#include "harness/plan/resource_limits.h"
#include "harness/scenario/scenario_option.h"
#include "harness/plan/cell_flags.h"
#include "harness/watchdog/process_probe.h"

namespace sharebench {
void link_exec_scenario();  // exec_scenario.cc: keeps the `exec` scenario in every binary that has the command
}  // namespace sharebench

namespace sharebench::cli {

namespace {
struct ExecFlags {
  std::vector<std::string> command, mp_starts, formats{"console"};
  std::string workdir, out, repetitions = "1";
  ConsoleChoice console;
  bool readable_results = false;
  CellFlagValues cell_values;
};
}  // namespace

static std::function<int()> add_exec_command(CLI::App& app, int argc, char** argv, std::vector<std::string> program) {
  CLI::App* cmd = app.add_subcommand(
      "exec", "run your own program as cells: its whole process tree supervised (hangs with every process's stacks, "
              "survivors, /dev/shm leaks, memory per process, faults), once per --mp-start method (docs/exec.md)");
  auto f = std::make_shared<ExecFlags>();
  // The words after `--` are the program's, set aside before parsing (run_cli): its own options
  // (python3 -c ..., -u) are never read as exec's.
  cmd->footer("\nCOMMAND [ARGS...]: the program to run, after --, as in\n  sharebench exec --mp-start fork,spawn -- "
              "python3 train.py --epochs 1\n");
  cmd->add_option("--mp-start", f->mp_starts,
                  "multiprocessing start methods, comma-separated (fork, spawn, forkserver): one cell each, the method "
                  "forced in every Python process of the program; default: the program's own choice")
      ->delimiter(',')
      ->check(one_of(python_start_methods()));
  cmd->add_option("--workdir", f->workdir, "the directory the program runs in (default: this one)");
  cmd->add_option("--repetitions", f->repetitions, "repetitions of each cell (1..1000)")->capture_default_str();
  add_cell_flag_options(*cmd, f->cell_values, CellConfig{}, true);
  cmd->add_option("--out", f->out, "write results into this directory (default: runs/<id>, linked as runs/latest)");
  cmd->add_flag("--readable-results", f->readable_results,
                "let every user read the results and reports (folder 0755, files 0644); by default they are the owner's "
                "alone (0700, 0600), since they hold what the program printed, secrets included");
  add_format_option(*cmd, f->formats, true, "the run directory");
  add_console_options(*cmd, f->console);

  return [f, program, argc, argv] {
    // CLI11 takes an empty value as none at all: look at the words themselves (up to the program's).
    bool workdir_given = false;
    for (int i = 1; i < argc && std::string(argv[i]) != "--"; ++i) {
      const std::string word = argv[i];
      workdir_given |= word == "--workdir=" || (word == "--workdir" && (i + 1 >= argc || argv[i + 1][0] == '\0'));
    }
    if (!program.empty()) f->command.insert(f->command.end(), program.begin(), program.end());
    if (f->command.empty()) return usage_error("exec needs a program to run: sharebench exec [options] -- COMMAND [ARGS...]");
    MatrixRequest request;
    std::vector<PlannedCell> cells;
    try {
      request.repetitions = static_cast<int>(parse_flag_int("--repetitions", f->repetitions, 1, kMaxRepetitions));
      apply_cell_flags(f->cell_values, request.base);  // only exec's flags were taken
      if (request.base.stacks == "gdb" && !gdb_available()) throw UsageError("--stacks gdb: gdb is not installed");
      const double duration_s = option_double(request.base, "duration");
      if (duration_s > 0) {
        // The cell must outlast the window and the shutdown: its SIGINT, the grace, SIGTERM, SIGKILL.
        const double needed = duration_s + kStopGraceS + kTermGraceS + kHelperGraceS + 10;
        if (!f->cell_values["--deadline"].empty() && request.base.deadline_s < needed) {
          throw UsageError(fmt::format("--deadline {} is too short for --duration {}: give at least {} (the window, the "
                                       "shutdown grace and the helpers' grace), or leave --deadline out",
                                       request.base.deadline_s, duration_s, needed));
        }
        request.base.deadline_s = std::max(request.base.deadline_s, needed);
      }
      if (workdir_given) throw UsageError("--workdir must name a directory, got ''");
      std::string workdir = f->workdir;
      if (workdir.empty()) {
        char cwd[PATH_MAX];
        if (!::getcwd(cwd, sizeof cwd)) throw UsageError("the current directory cannot be read; pass --workdir");
        workdir = cwd;
      }
      char resolved[PATH_MAX];
      if (!::realpath(workdir.c_str(), resolved)) throw UsageError(fmt::format("--workdir {}: no such directory", workdir));
      struct stat st {};
      if (::stat(resolved, &st) != 0 || !S_ISDIR(st.st_mode)) throw UsageError(fmt::format("--workdir {}: not a directory", workdir));
      if (::access(resolved, X_OK) != 0) throw UsageError(fmt::format("--workdir {}: cannot enter it: {}", workdir, std::strerror(errno)));
      request.base.workdir = resolved;
      request.base.command = f->command;
      std::string why;
      if (resolve_program(f->command, request.base.workdir, &why).empty()) throw UsageError(why);
      // One cell per --mp-start method: the scenario's variants (the planner keeps each once, so
      // --mp-start spawn,spawn is one cell); the program's own choice when none is given.
      request.scenarios.clear();
      for (const std::string& m : f->mp_starts) request.scenarios.push_back("exec/" + m);
      if (request.scenarios.empty()) request.scenarios.push_back(std::string("exec/") + kOwnStartMethod);
      request.starts = {"fork"};  // the supervisor's; the program's is the variant
      request.procs = {1};
      cells = plan_matrix(request);
      ensure_resource_limits(resource_needs(cells));  // as run's: a limit too low is refused, not blamed on the program
    } catch (const UsageError& e) {
      return usage_error(e.what());
    }
    RunnerOptions options;
    options.cells = std::move(cells);
    options.repetitions = request.repetitions;
    options.out_dir = absolute_out_dir(f->out);  // the program may change or remove the directory it started in
    options.readable_results = f->readable_results;
    options.command.assign(argv, argv + argc);
    return run_and_report(std::move(options), f->formats, f->console, request.base);
  };
}

Command exec_command() {
  link_exec_scenario();
  return {"exec", [](CLI::App& a, const CommandLine& l) { return add_exec_command(a, l.argc, l.argv, l.program); },
          kCellsExitCodes, /*program_after_dashes=*/true};
}

}  // namespace sharebench::cli
