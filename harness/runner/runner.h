// Runner: runs planned cells one after another, each repetition in a fresh arena, under the
// watchdog; asks the scenario for its checks; writes the results file after every cell (so a
// crash or an interrupt leaves everything done so far); never formats anything itself beyond a
// progress line on a terminal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/results/results.h"
#include "harness/plan/matrix.h"
#include "harness/runner/adaptive_repetitions.h"
#include "harness/runner/ranking_blocks.h"

namespace sharebench {

struct RunnerOptions {
  std::vector<PlannedCell> cells;  // every option that changes a cell is in its config
  int repetitions = 1;
  AutoRepetitions auto_repetitions;  // enabled: --repetitions auto (repetitions is ignored)
  BlockPolicy blocks;                // enabled: ranking blocks after the first pass (ranking_blocks.h)
  std::string out_dir;            // empty: runs_root/<run id>, with runs_root/latest
  std::string runs_root = "runs";
  std::vector<std::string> command;  // argv, recorded; its first word is the binary of repro lines
  bool progress = false;          // a live progress line on stderr (a terminal), moving during a cell
  ShardInfo shard;                // which part of the matrix `cells` is (run --shard)
  bool readable_results = false;  // exec --readable-results: its folder 0755 and files 0644, not the owner's alone
};

struct RunOutcome {
  RunResult result;
  std::string results_path;
  int exit_code = 0;  // 0 all as expected, 1 something unexpected, 130 interrupted
};

// Throws std::runtime_error when the output cannot be written (before any cell runs).
RunOutcome run_matrix(const RunnerOptions& options);

// Called about five times a second while a repetition runs, for a progress line.
struct CellProgress {
  std::int64_t steps_done = 0;   // over every worker
  std::int64_t steps_total = 0;  // steps × workers; 0 when unknown (a program under exec)
  double quiet_s = 0;            // the longest any running worker has gone without progress
  double hang_timeout_s = 0;
};
using ProgressSink = std::function<void(const CellProgress&)>;

// Runs one repetition of one cell; exposed for tests.
Repetition run_repetition(const PlannedCell& cell, int index, const ProgressSink& progress = {});

// The reproduce lines are generated from the stored config: harness/plan/cell_flags.h.

}  // namespace sharebench
