// Matrix: turns the run command's lists (scenarios or scenario/variant names, start methods,
// process counts) into the list of cells to run, with each cell's expectation. Bad input becomes
// a UsageError with one sentence that says what is wrong (the CLI prints it and exits 2).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "harness/results/results.h"
#include "harness/config/cell_config.h"
#include "harness/plan/cell_flags.h"

namespace sharebench {

// Hard limits on input, with where they come from.
inline constexpr int kMaxProcs = 64;                  // ProcessMutex's waiter bitmap is 64 bits
inline constexpr std::int64_t kMaxSteps = 100'000'000;
inline constexpr int kMaxRepetitions = 1000;
inline constexpr double kMaxTimeoutS = 24 * 3600;

struct MatrixRequest {
  std::vector<std::string> scenarios;  // empty: every registered scenario
  std::vector<std::string> starts;     // empty: fork, spawn, forkserver
  std::vector<int> procs;              // empty: 1, 2
  bool known_bugs = false;             // add every known-bug variant of the chosen scenarios
  int repetitions = 1;
  CellConfig base;                     // workload, timeouts
};

struct PlannedCell {
  CellConfig config;
  ScenarioKind kind = ScenarioKind::kLockOnly;
  Expectation expected;
  bool known_bug = false;
};

std::vector<PlannedCell> plan_matrix(const MatrixRequest& request);

// Every `total`-th cell of a planned matrix, starting at the `index`-th (1-based): run --shard K/N.
// Throws UsageError for a shard that is not one (K outside 1..N).
std::vector<PlannedCell> shard_cells(const std::vector<PlannedCell>& cells, int index, int total);

}  // namespace sharebench
