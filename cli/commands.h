// The sharebench command line: one function per subcommand, each adding itself to the CLI11 app
// and returning the process exit code when run.
// Exit codes: 0 every verdict as expected, 1 a check went against expectation, 2 bad input
// (one line on stderr), 3 internal error, 128 + n interrupted by signal n (130: SIGINT).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "harness/results/results.h"
#include "harness/runner/runner.h"
#include "reports/report_writers.h"

namespace sharebench::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitUnexpected = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInternal = 3;

// A CLI11 check that the value is one of `known`; its error names them and, for a near miss, the
// one meant: "htlm not in {console,json,md,html,...}: did you mean html?". Use it instead of
// CLI::IsMember for every closed list of words.
CLI::Validator one_of(std::vector<std::string> known);

// Prints "sharebench: error: MESSAGE" as exactly one line on stderr; returns kExitUsage.
int usage_error(const std::string& message);

// --out as an absolute path, fixed before anything runs: a program run by exec may change or remove
// the directory sharebench started in. "" stays "" (runs/<id>).
std::string absolute_out_dir(const std::string& out);

// Reads a results file for a reading command; on a foreign or malformed file prints the one-line
// error and returns nullopt (the caller exits with kExitUsage).
std::optional<RunResult> load_results_or_report(const std::string& path);

// Runs the matrix, then stops the forkserver whatever happened. An unwritable output path prints
// the one-line error and returns nullopt (the caller exits with kExitUsage).
std::optional<RunOutcome> run_matrix_then_stop_forkserver(const RunnerOptions& options);

// Runs planned cells (the forkserver started first when a cell needs it, interrupts handled), writes
// the report files and prints the console or JSON report: the end of `run` and of `exec`. Returns
// the process exit code.
struct ConsoleChoice;
int run_and_report(RunnerOptions options, const std::vector<std::string>& formats, const ConsoleChoice& console,
                   const CellConfig& base);

// --format FORMAT[,FORMAT...] with the choices of the report registry (reports/report_writers.h);
// `with_none` adds "none" for a command that prints the console report unless told not to; `dir`
// names where the file formats go, for the help text.
CLI::Option* add_format_option(CLI::App& cmd, std::vector<std::string>& formats, bool with_none,
                               const std::string& dir);
// How the console report is printed: --color auto|always|never, and --explain (the recommendation's
// method in full instead of its legend line), on every subcommand that prints one.
struct ConsoleChoice {
  std::string color = "auto";
  bool explain = false;
  RenderOptions render(int fd) const;  // colour: always; never; auto = a terminal on `fd` and no NO_COLOR set
};
void add_console_options(CLI::App& cmd, ConsoleChoice& choice);

// The values given for each cell flag (harness/plan/cell_flags.h), by flag name.
using CellFlagValues = std::map<std::string, std::vector<std::string>>;
// Adds every cell flag a command takes as a CLI11 option, with its help and its default from
// `defaults`: a command that runs a program (`program`: exec) the flags marked for programs (with
// their program help), every other command all but the program-only ones. A list flag takes
// commas; a single one the last value given. `only`, when given, keeps these flags alone (soak
// takes --steps, --hang-timeout and --chaos and draws the rest itself).
void add_cell_flag_options(CLI::App& cmd, CellFlagValues& values, const CellConfig& defaults, bool program,
                           const std::vector<std::string>& only = {});
// Sets `base`'s fields from the values given, in the table's order; throws UsageError.
void apply_cell_flags(CellFlagValues& values, CellConfig& base);

// Each returns the action to run after parsing.
std::function<int()> add_run_command(CLI::App& app, int argc, char** argv);
std::function<int()> add_list_command(CLI::App& app);
// Where `list` reads the scenarios from instead of this binary's registry: the command-line front,
// which links no scenario that needs LibTorch, reads the catalog its LibTorch binary wrote. The
// source returns nullopt after saying why on stderr.
void use_scenario_catalog(std::function<std::optional<nlohmann::json>()> source);
std::function<int()> add_report_command(CLI::App& app);
std::function<int()> add_compare_command(CLI::App& app);
std::function<int()> add_repro_command(CLI::App& app);
std::function<int()> add_merge_command(CLI::App& app);

}  // namespace sharebench::cli
