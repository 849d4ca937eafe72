// CellConfig: everything one cell repetition runs with — scenario, variant, start method, process
// count, seed, workload sizes and every harness option that can change a verdict (timeouts, the
// fault, the arena's size, how stacks are taken, checks switched off). It is what a spawned or
// forkserver worker receives (as JSON), what the results file stores for each cell and what
// `repro` replays: a cell is reproducible from it alone. The command-line flag of each field is in
// harness/plan/cell_flags.h, the one place that reads and writes them.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/config/fault_plan.h"

namespace sharebench {

enum class StartMethod { kFork, kSpawn, kForkserver, kThread };

std::string_view to_string(StartMethod m);
std::ostream& operator<<(std::ostream& out, StartMethod m);  // its name, as to_string gives it
std::optional<StartMethod> parse_start_method(std::string_view s);
const std::vector<StartMethod>& all_start_methods();
// Python multiprocessing's start methods (exec --mp-start, which makes them its variants): every
// start method but threads, by name.
const std::vector<std::string>& python_start_methods();

// The standard workload (an MLP on synthetic classification data, trained with SGD, or another model
// on a teacher's outputs: workload/model_zoo.h); every strategy uses it unless a run says otherwise. Defaults are the project's standard sizes.
struct WorkloadOptions {
  std::int64_t steps = 1000;         // training steps per worker
  std::int64_t batch = 32;
  double lr = 0.05;
  double momentum = 0.0;             // SGD momentum; its buffers live in shared memory too
  std::int64_t input = 64;
  std::int64_t hidden = 256;         // two hidden layers of this width
  std::int64_t classes = 10;
  std::int64_t train_rows = 8192;
  std::int64_t test_rows = 2048;
  std::int64_t threads_per_worker = 1;  // intra-op threads in each worker
  std::uint64_t seed = 1;
  std::int64_t step_delay_us = 0;    // an artificial pause after every step: slows a run on purpose
  // The model every strategy shares (workload/model_zoo.h): "mlp" (the MLP above), a built-in
  // (convnet-s, convnet-m, transformer-s, transformer-m) or the path of a TorchScript file, whose
  // one sample is `input_shape` ("3,32,32") of `input_dtype` ("float32", or "int64:V" for tokens
  // in [0, V)).
  std::string model = "mlp";
  std::string input_shape;
  std::string input_dtype = "float32";
};

struct CellConfig {
  std::string scenario;
  std::string variant;
  StartMethod start = StartMethod::kFork;
  int procs = 1;
  int repetition = 0;
  WorkloadOptions workload;
  double hang_timeout_s = 10;
  double deadline_s = 120;
  FaultPlan fault;  // injected by the runner; none by default
  std::int64_t arena_mb = 256;               // shared arena capacity, reserved sparsely
  double max_growth_mb = 64;                 // the `memory` check: a worker's private memory may grow this much
  std::string stacks = "auto";               // on a hang: gdb, proc (/proc only), auto (gdb if installed)
  std::vector<std::string> disabled_checks;  // detector self-test: these checks' results are dropped
  std::uint64_t chaos_seed = 0;              // --chaos: perturb the workers' schedules from this seed (0: off)
  // The options of the cell's scenario's own, by name, as text ("average-every" → "10"): declared
  // by the scenario (harness/scenario/scenario_option.h), read with option_int() and kin.
  std::map<std::string, std::string> options;
  // A scenario that runs a program (ScenarioInfo::RunsCommand): the program (argv, the first word
  // looked up on PATH) and the directory it runs in (absolute: where the command was called). What
  // else the scenario's command chose is its variant and its options. Empty for every other scenario.
  std::vector<std::string> command;
  std::string workdir;

  // "locked/whole-step"
  std::string scenario_variant() const { return scenario + "/" + variant; }
  // A stable id for the cell, without the repetition: "locked/whole-step@fork:2", and with a fault
  // "locked/whole-step@fork:2~kill:1@20"; with a model other than the MLP,
  // "locked/whole-step@fork:2+transformer-s". A program's cell is named by its script or binary,
  // with its variant where the start method would be (a program's supervisor always forks; exec's
  // variants are the start methods it forces): "exec/hogwild.py@spawn:1".
  std::string id() const;
  std::string to_json() const;
  // Throws std::invalid_argument (a field of the wrong type or out of its domain) naming the field.
  static CellConfig from_json(std::string_view text);
};

// A program's short name for cell ids and reports: its script, module or binary ("hogwild.py").
std::string command_name(const std::vector<std::string>& command);

bool operator==(const WorkloadOptions& a, const WorkloadOptions& b);
bool operator==(const CellConfig& a, const CellConfig& b);
inline bool operator!=(const CellConfig& a, const CellConfig& b) { return !(a == b); }

}  // namespace sharebench
