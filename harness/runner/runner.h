// Runner: runs planned cells one after another, each repetition in a fresh arena, under the
// watchdog; asks the scenario for its checks; writes the results file after every cell (so a
// crash or an interrupt leaves everything done so far); never formats anything itself beyond a
// progress line on a terminal.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "harness/results/results.h"
#include "harness/runner/matrix.h"

namespace sharebench {

struct RunnerOptions {
  std::vector<PlannedCell> cells;
  int repetitions = 1;
  std::string out_dir;            // empty: runs_root/<run id>, with runs_root/latest
  std::string runs_root = "runs";
  std::vector<std::string> command;  // argv, recorded and used for repro lines
  std::size_t arena_bytes = 256u << 20;
  bool progress = false;          // a live progress line on stderr
  bool gdb_stacks = false;        // on a hang, take every stuck process's stacks with gdb
  std::vector<std::string> disabled_checks;  // detector self-test: drop these checks' results
};

struct RunOutcome {
  RunResult result;
  std::string results_path;
  int exit_code = 0;  // 0 all as expected, 1 something unexpected, 130 interrupted
};

// Throws std::runtime_error when the output cannot be written (before any cell runs).
RunOutcome run_matrix(const RunnerOptions& options);

// Runs one repetition of one cell; exposed for tests.
Repetition run_repetition(const PlannedCell& cell, int index, std::size_t arena_bytes, bool gdb_stacks = false,
                          const std::vector<std::string>& disabled_checks = {});

// The arguments (after the binary) of a run that re-runs exactly this cell. None needs shell
// quoting: names, numbers and flags only.
std::vector<std::string> repro_args(const CellConfig& cell, int repetitions);
// The command that re-runs exactly this cell.
std::string repro_command(const std::string& binary, const PlannedCell& cell, int repetitions);

}  // namespace sharebench
