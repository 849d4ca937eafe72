// Soak: the random plan, the process mark and the figures.
#include "wings/soak/soak.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>

#include <fmt/format.h>

#include "harness/faults/fault_injector.h"
#include "harness/faults/nemesis.h"
#include "harness/scenario/scenario.h"

namespace sharebench {

std::vector<SoakCandidate> soak_candidates() {
  std::vector<SoakCandidate> out;
  for (const ScenarioInfo* scenario : ScenarioRegistry::instance().all()) {
    if (scenario->opted_out("soak")) continue;
    std::vector<StartMethod> starts;
    for (StartMethod m : {StartMethod::kFork, StartMethod::kSpawn, StartMethod::kForkserver}) {
      if (scenario->supports(m)) starts.push_back(m);
    }
    if (starts.empty()) continue;
    for (const VariantInfo& v : scenario->variants()) {
      if (!v.known_bug && v.no_random_faults.empty()) out.push_back(SoakCandidate{scenario, &v, starts});
    }
  }
  return out;
}

namespace {

constexpr int kSoakCellsWithoutFault = 20;  // percent

// The kind and hold of the fault drawn at `roll` (0..79) from the nemeses' soak shares.
void draw_nemesis(int roll, bool locks_every_step, double hang_timeout_s, FaultPlan& f) {
  for (const auto& nemesis : NemesisRegistry::instance().all()) {
    for (const Nemesis::DrawShare& share : nemesis->draw_shares()) {
      if (roll >= share.percent) {
        roll -= share.percent;
        continue;
      }
      f.kind = nemesis->needs_lock_every_step() && !locks_every_step ? std::string(nemesis->draw_fallback())
                                                                      : std::string(nemesis->name());
      f.hold_s = share.hold_of_hang_timeout * hang_timeout_s;
      return;
    }
  }
}

}  // namespace

std::vector<PlannedCell> plan_soak(const SoakOptions& o) {
  if (o.cells < 1 || o.cells > 100000) throw UsageError(fmt::format("--cells must be 1..100000, got {}", o.cells));
  if (o.steps < 20 || o.steps > 100000) throw UsageError(fmt::format("--steps must be 20..100000, got {}", o.steps));
  if (!(o.hang_timeout_s >= 0.5 && o.hang_timeout_s <= 600)) throw UsageError("--hang-timeout must be 0.5..600 s");
  std::mt19937_64 random(o.seed);
  auto pick = [&](int n) { return static_cast<int>(std::uniform_int_distribution<int>(0, n - 1)(random)); };
  const std::vector<SoakCandidate> candidates = soak_candidates();
  if (candidates.empty()) throw UsageError("soak: no scenario of this binary has a clean variant to soak");
  std::vector<PlannedCell> cells;
  for (int i = 0; i < o.cells; ++i) {
    PlannedCell cell;
    CellConfig& c = cell.config;
    // Not asked here whether the cell can run on this machine: unavailable() may touch a device
    // runtime (CUDA), which must not happen before the forkserver forks. A cell that cannot run is
    // skipped, and counts as such.
    const SoakCandidate& k = candidates[static_cast<std::size_t>(pick(static_cast<int>(candidates.size())))];
    c.scenario = k.scenario->name();
    c.variant = k.variant->name;
    c.start = k.starts[static_cast<std::size_t>(pick(static_cast<int>(k.starts.size())))];
    c.procs = std::max(2, k.scenario->min_procs()) + pick(2);
    c.workload.steps = o.steps;
    c.workload.seed = o.seed + static_cast<std::uint64_t>(i);
    // A pause after every step keeps each cell running long enough (steps × 2 ms) for a fault
    // drawn at steps 1..10 to land before the target finishes.
    c.workload.step_delay_us = 2000;
    c.hang_timeout_s = o.hang_timeout_s;
    c.chaos_seed = o.chaos_seed;
    c.deadline_s = 60;
    // No fault in 20 % of the cells; the rest in each nemesis's shares, in the registry's order
    // (kill 30 %, kill-holding-lock 15 %, a short stall 15 %, a long one 20 %).
    const int roll = pick(100);
    FaultPlan& f = c.fault;
    if (roll >= kSoakCellsWithoutFault) {
      f.rank = pick(c.procs);
      f.at_step = 1 + pick(10);
      draw_nemesis(roll - kSoakCellsWithoutFault, k.variant->locks_every_step, o.hang_timeout_s, f);
    }
    cell.expected = f.active() ? expectation_under_fault(f, c.hang_timeout_s) : Expectation{};
    cells.push_back(std::move(cell));
  }
  return cells;
}

std::string mark_soak_processes() {
  const std::string mark = fmt::format("{}-{}", ::getpid(), std::random_device{}());
  ::setenv(kSoakMarkVariable, mark.c_str(), 1);
  return mark;
}

std::vector<int> processes_with_mark(const std::string& mark) {
  std::vector<int> found;
  const std::string needle = std::string(kSoakMarkVariable) + "=" + mark;
  std::unique_ptr<DIR, int (*)(DIR*)> proc(::opendir("/proc"), &::closedir);
  if (!proc) return found;
  const pid_t self = ::getpid();
  while (const dirent* entry = ::readdir(proc.get())) {
    const std::string name = entry->d_name;
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const int pid = std::stoi(name);
    if (pid == self) continue;
    std::ifstream environ("/proc/" + name + "/environ", std::ios::binary);
    std::string variable;
    while (std::getline(environ, variable, '\0')) {
      if (variable == needle) {
        found.push_back(pid);
        break;
      }
    }
  }
  return found;
}

SoakFigures summarise_soak(const RunResult& run) {
  SoakFigures f;
  for (const CellResult& cell : run.cells) {
    ++f.cells;
    const FaultPlan& plan = cell.config.fault;
    const std::string kind =
        plan.active() ? nemesis_of(plan).draw_label(plan, cell.config.hang_timeout_s) : std::string("none");
    ++f.faults_planned[kind];
    if (cell.as_expected()) {
      ++f.as_expected;
    } else {
      for (const Repetition& rep : cell.repetitions) {
        if (!rep.as_expected) f.unexpected.push_back(fmt::format("{}: {}", cell.config.id(), rep.expectation_message));
      }
    }
    for (const Repetition& rep : cell.repetitions) {
      if (rep.status == RunStatus::kHang) ++f.hangs;
      for (const WorkerRecord& w : rep.workers) f.worker_deaths += (!w.exited && w.signal != 0) ? 1 : 0;
      for (const Check& c : rep.checks) {
        if (c.name == checks::kFaultInjected && c.verdict == Verdict::kPass) ++f.faults_injected[kind];
      }
    }
  }
  return f;
}

}  // namespace sharebench
