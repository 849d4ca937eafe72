// Soak: many short cells, each with a random fault (or none), drawn from a seed so a soak is
// reproducible; then the figures that say whether the harness held up: cells run, faults injected
// by kind, hangs detected, cells not as expected, and what the run left behind (processes that
// carry the run's mark, /dev/shm entries with its prefix) — all of which must be zero.
//
// The mark: every process of the run inherits SHAREBENCH_SOAK=<id> in its environment (the runner
// sets it before the forkserver starts), so a worker that escaped its group and was re-parented
// to init is still found by scanning /proc, and other programs never are.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "harness/results/results.h"
#include "harness/plan/matrix.h"
#include "harness/scenario/scenario.h"

namespace sharebench {

struct SoakOptions {
  int cells = 40;
  std::uint64_t seed = 1;
  std::int64_t steps = 120;
  double hang_timeout_s = 2;
  std::uint64_t chaos_seed = 0;  // --chaos: every cell's schedule perturbed too (docs/chaos.md); 0: off
};

// One variant a soak may draw, from the registry's traits: every clean variant of every scenario
// that has not opted out of "soak" and has not said NoRandomFaults, with the process start methods its
// scenario supports.
struct SoakCandidate {
  const ScenarioInfo* scenario;
  const VariantInfo* variant;
  std::vector<StartMethod> starts;  // fork, spawn and forkserver, as far as the scenario supports them
};
std::vector<SoakCandidate> soak_candidates();
// Deterministic in options.seed. Throws UsageError on bad options.
std::vector<PlannedCell> plan_soak(const SoakOptions& options);

inline constexpr const char* kSoakMarkVariable = "SHAREBENCH_SOAK";
// Sets the mark for this process and every process it starts from now on; returns it.
std::string mark_soak_processes();
// Processes other than the caller whose environment carries `mark`.
std::vector<int> processes_with_mark(const std::string& mark);

struct SoakFigures {
  int cells = 0;
  int as_expected = 0;
  std::map<std::string, int> faults_planned;   // by kind ("stall (long)": past the hang timeout), "none" included
  std::map<std::string, int> faults_injected;  // by kind
  int hangs = 0;                               // repetitions the watchdog ended as a hang
  int worker_deaths = 0;                       // workers that died of a signal
  std::vector<std::string> unexpected;         // cell ids with their expectation messages
  std::vector<int> leftover_processes;
  std::vector<std::string> leftover_segments;
  bool ok() const {
    return unexpected.empty() && leftover_processes.empty() && leftover_segments.empty() && cells > 0;
  }
};

SoakFigures summarise_soak(const RunResult& run);

}  // namespace sharebench
