// cell_flags: the flag table (the harness's rows and each scenario's own options) and the reproduce line.
#include "harness/plan/cell_flags.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/faults/nemesis.h"
#include "harness/scenario/scenario.h"

namespace sharebench {

namespace {
// Upper bounds, with where they come from.
constexpr std::int64_t kMaxSteps = 100'000'000;   // a day of the fastest cell; guards typos
constexpr double kMaxTimeoutS = 24 * 3600;
constexpr std::int64_t kMaxArenaMb = 65536;       // reserved sparsely, but mapped: keep it sane
constexpr std::int64_t kMaxThreads = 256;


CellFlag int_flag(std::string flag, std::string help, std::int64_t min, std::int64_t max,
                  std::int64_t& (*field)(CellConfig&)) {
  CellFlag f;
  f.flag = flag;
  f.help = std::move(help);
  f.type_name = "INT";
  f.parse = [flag, min, max, field](CellConfig& c, const std::string& t) { field(c) = parse_flag_int(flag, t, min, max); };
  f.format = [field](CellConfig c) { return std::to_string(field(c)); };  // a copy: the accessor is non-const
  return f;
}

CellFlag double_flag(std::string flag, std::string help, double min, double max, double& (*field)(CellConfig&)) {
  CellFlag f;
  f.flag = flag;
  f.help = std::move(help);
  f.type_name = "NUMBER";
  f.parse = [flag, min, max, field](CellConfig& c, const std::string& t) { field(c) = parse_flag_double(flag, t, min, max); };
  f.format = [field](CellConfig c) { return format_flag_number(field(c)); };
  return f;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

// How much the workers run, from which seed, under which chaos.
void add_workload_flags(std::vector<CellFlag>& flags) {
  flags.push_back(int_flag("--steps", "training steps (units of work) per worker", 1, kMaxSteps,
                           [](CellConfig& c) -> std::int64_t& { return c.workload.steps; }));
  {
    CellFlag f;
    f.flag = "--seed";
    f.type_name = "INT";
    f.program = true;
    f.help = "seed for data and initial weights";
    f.program_help = "seed of kill:random's draw of a child (the program's own randomness is its own)";
    f.parse = [](CellConfig& c, const std::string& t) {
      c.workload.seed = static_cast<std::uint64_t>(parse_flag_int("--seed", t, 0, INT64_MAX));
    };
    f.format = [](const CellConfig& c) { return std::to_string(c.workload.seed); };
    flags.push_back(f);
  }
  {
    CellFlag f;
    f.flag = "--chaos";
    f.type_name = "SEED";
    f.help = "perturb every worker's schedule from this seed (docs/chaos.md): rare interleavings become common; 0: off";
    f.parse = [](CellConfig& c, const std::string& t) {
      c.chaos_seed = static_cast<std::uint64_t>(parse_flag_int("--chaos", t, 0, INT64_MAX));
    };
    f.format = [](const CellConfig& c) { return std::to_string(c.chaos_seed); };
    flags.push_back(f);
  }
}

// The model and its training.
void add_training_flags(std::vector<CellFlag>& flags) {
  flags.push_back(int_flag("--batch", "batch size", 1, 1 << 20, [](CellConfig& c) -> std::int64_t& { return c.workload.batch; }));
  flags.push_back(double_flag("--lr", "SGD learning rate", 1e-9, 99.0, [](CellConfig& c) -> double& { return c.workload.lr; }));
  flags.push_back(double_flag("--momentum", "SGD momentum (its buffers are shared too)", 0.0, 0.999,
                              [](CellConfig& c) -> double& { return c.workload.momentum; }));
  flags.push_back(int_flag("--hidden", "width of the two hidden layers", 1, 65536,
                           [](CellConfig& c) -> std::int64_t& { return c.workload.hidden; }));
  {
    auto string_flag = [&](std::string flag, std::string help, std::string& (*field)(CellConfig&)) {
      CellFlag f;
      f.flag = flag;
      f.help = std::move(help);
      f.parse = [flag, field](CellConfig& c, const std::string& t) {
        if (t.empty()) throw UsageError(fmt::format("{} must not be empty", flag));
        field(c) = t;
      };
      f.format = [field](CellConfig c) { return field(c); };
      flags.push_back(f);
    };
    string_flag("--model",
                "the model every strategy shares: mlp, convnet-s, convnet-m, transformer-s, transformer-m, or the path "
                "of a TorchScript file (torch.jit.save) with --input-shape; a list (convnet-s,convnet-m) is a matrix axis for "
                "the training and inference scenarios",
                [](CellConfig& c) -> std::string& { return c.workload.model; });
    string_flag("--input-shape", "a TorchScript model's one sample, without the batch dimension: 3,32,32",
                [](CellConfig& c) -> std::string& { return c.workload.input_shape; });
    string_flag("--input-dtype", "a TorchScript model's input: float32, or int64:V for tokens in [0, V)",
                [](CellConfig& c) -> std::string& { return c.workload.input_dtype; });
  }
  flags.push_back(int_flag("--threads", "intra-op threads per worker", 1, kMaxThreads,
                           [](CellConfig& c) -> std::int64_t& { return c.workload.threads_per_worker; }));
  flags.push_back(int_flag("--step-delay-us", "pause after every step, µs (slows a run on purpose)", 0, 10'000'000,
                           [](CellConfig& c) -> std::int64_t& { return c.workload.step_delay_us; }));
}

// How a repetition is supervised: hang and deadline, the fault, the arena, stacks.
void add_supervision_flags(std::vector<CellFlag>& flags) {
  flags.push_back(double_flag("--hang-timeout", "seconds without progress that make a hang", 0.01, kMaxTimeoutS,
                              [](CellConfig& c) -> double& { return c.hang_timeout_s; }));
  flags.back().program = true;
  flags.back().program_help = "seconds without a progress beat from any process of the program (before its first beat, "
                           "without CPU time anywhere in its tree) that make a hang";
  flags.push_back(double_flag("--deadline", "seconds a cell repetition may take in all", 0.01, kMaxTimeoutS,
                              [](CellConfig& c) -> double& { return c.deadline_s; }));
  flags.back().program_help = "seconds the program may run in all before it is stopped and called a deadline (raised to fit "
                           "--duration)";
  flags.back().program = true;
  {
    CellFlag f;
    f.flag = "--fault";
    f.type_name = "KIND:RANK@STEP";
    f.program = true;
    f.help = "inject a fault into every cell, KIND:RANK@STEP: kill:1@20 (SIGKILL rank 1 at its step 20), "
             "kill-holding-lock:0@5 (SIGKILL while it holds a lock), stall:1@10+3 (SIGSTOP for 3 s); under `exec`, a "
             "child of the program: kill:child@1 (its first child, 1 s after its birth), kill:child2@0.5, "
             "kill:random@2 (2 s after the start, one drawn with --seed), stall:child@1+5";
    f.program_help = "inject a fault into the program's process tree: kill:child@1 (SIGKILL its first child 1 s after "
                  "that child's birth), kill:child2@0.5 (its second), kill:random@2 (2 s after the start, a live child "
                  "drawn with --seed), stall:child@1+5 (SIGSTOP for 5 s, then SIGCONT); multiprocessing's helpers are "
                  "never chosen";
    f.parse = [](CellConfig& c, const std::string& t) {
      try {
        c.fault = parse_fault_plan(t);
      } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--fault: ") + e.what());
      }
    };
    f.format = [](const CellConfig& c) { return c.fault.spec(); };
    flags.push_back(f);
  }
  flags.push_back(int_flag("--arena-mb", "shared arena capacity per cell, MiB (reserved sparsely)", 1, kMaxArenaMb,
                           [](CellConfig& c) -> std::int64_t& { return c.arena_mb; }));
  flags.push_back(double_flag("--max-growth-mb",
                              "the memory check: how far a worker's private memory (USS) may grow during its work, "
                              "MiB",
                              0.0, 1e6, [](CellConfig& c) -> double& { return c.max_growth_mb; }));
}

// How a repetition is judged and what exec alone takes.
void add_judging_flags(std::vector<CellFlag>& flags) {
  {
    CellFlag f;
    f.flag = "--stacks";
    f.type_name = "gdb|proc|auto";
    f.program = true;
    f.help = "stacks of hung workers: gdb, proc (/proc only), auto (gdb when installed)";
    f.program_help = "on a hang, native stacks of the program's processes: gdb, proc (/proc only), auto (gdb when "
                  "installed); Python stacks are taken in every case";
    f.parse = [](CellConfig& c, const std::string& t) {
      if (t != "gdb" && t != "proc" && t != "auto") {
        throw UsageError(fmt::format("--stacks must be gdb, proc or auto, got '{}'", t));
      }
      c.stacks = t;
    };
    f.format = [](const CellConfig& c) { return c.stacks; };
    flags.push_back(f);
  }
  {
    CellFlag f;
    f.flag = "--disable-check";
    f.type_name = "CHECK";
    f.program = true;
    f.help = "detector self-test: drop these checks from the results, as if switched off; a planted bug only "
             "they catch then fails the run";
    f.list = true;
    f.parse = [](CellConfig& c, const std::string& t) {
      for (const std::string& name : split_list(t)) {
        if (name.empty() || name.size() > 64 ||
            name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_.") != std::string::npos) {
          throw UsageError(fmt::format("--disable-check takes check names (a-z, 0-9, '-', '_', '.'), got '{}'", name));
        }
        if (std::find(c.disabled_checks.begin(), c.disabled_checks.end(), name) == c.disabled_checks.end()) {
          c.disabled_checks.push_back(name);
        }
      }
    };
    f.format = [](const CellConfig& c) { return fmt::format("{}", fmt::join(c.disabled_checks, ",")); };
    flags.push_back(f);
  }
}

// Each option a registered scenario declares (ScenarioInfo::IntOption and kin), once: `run` takes
// those of the scenarios it runs, `exec` those of the scenarios that run a program.
void add_scenario_option_flags(std::vector<CellFlag>& flags) {
  const std::vector<CellFlag> harness_flags = flags;
  std::vector<const ScenarioOption*> seen;
  for (const ScenarioInfo* s : ScenarioRegistry::instance().all()) {
    for (const ScenarioOption& option : s->options()) {
      const auto same = std::find_if(seen.begin(), seen.end(), [&](const ScenarioOption* o) { return o->name == option.name; });
      if (same != seen.end()) {
        if (!(**same == option)) {
          throw std::logic_error(fmt::format("two scenarios declare the option --{} differently", option.name));
        }
        continue;
      }
      check_option_name(s->name(), option.name, harness_flags);
      seen.push_back(&option);
      CellFlag f;
      f.flag = "--" + option.name;
      f.help = option.help;
      f.type_name = option.type == ScenarioOption::Type::kInt      ? "INT"
                    : option.type == ScenarioOption::Type::kDouble ? "NUMBER"
                                                                   : fmt::format("{}", fmt::join(option.choices, "|"));
      f.program = f.program_only = s->runs_command();
      f.parse = [&option](CellConfig& c, const std::string& t) { c.options[option.name] = option.normalize(t); };
      f.format = [&option](const CellConfig& c) {
        const auto it = c.options.find(option.name);
        return it == c.options.end() ? option.default_value : it->second;
      };
      flags.push_back(f);
    }
  }
}

}  // namespace

void check_option_name(const std::string& scenario, const std::string& option, const std::vector<CellFlag>& harness_flags) {
  // The commands' own flags (cli/), which no option may shadow either.
  static const char* const kCommandFlags[] = {"scenario", "start", "procs", "repetitions", "blocks", "budget", "interval",
                                              "tie-margin", "readable-results",
                                              "known-bugs", "shard", "out", "format", "color", "mp-start", "workdir",
                                              "help", "version"};
  bool taken = std::find(std::begin(kCommandFlags), std::end(kCommandFlags), option) != std::end(kCommandFlags);
  for (const CellFlag& f : harness_flags) taken |= f.flag == "--" + option;
  if (taken) {
    throw std::logic_error(fmt::format("scenario {} declares an option --{}, which is already a flag of sharebench's "
                                       "own: give the option another name", scenario, option));
  }
}

namespace {

std::vector<CellFlag> make_flags() {
  std::vector<CellFlag> flags;
  add_workload_flags(flags);
  add_training_flags(flags);
  add_supervision_flags(flags);
  add_judging_flags(flags);
  add_scenario_option_flags(flags);
  return flags;
}
}  // namespace

const std::vector<CellFlag>& cell_flags() {
  static const std::vector<CellFlag> flags = make_flags();
  return flags;
}

const CellFlag* find_cell_flag(const std::string& flag) {
  for (const CellFlag& f : cell_flags()) {
    if (f.flag == flag) return &f;
  }
  return nullptr;
}

std::vector<std::string> repro_args(const CellConfig& c, int repetitions) {
  const ScenarioInfo* program_runner = ScenarioRegistry::instance().find(c.scenario);
  if (!c.command.empty() && program_runner != nullptr && program_runner->runs_command()) {
    // COMMAND [VARIANT_FLAG VARIANT] [--workdir DIR] [flags] -- PROGRAM (ScenarioInfo::RunsCommand)
    std::vector<std::string> args{program_runner->command()};
    const auto& variants = program_runner->variants();
    if (!variants.empty() && c.variant != variants.front().name) {
      args.insert(args.end(), {program_runner->variant_flag(), c.variant});
    }
    if (!c.workdir.empty()) args.insert(args.end(), {"--workdir", c.workdir});
    const CellConfig defaults;
    for (const CellFlag& f : cell_flags()) {
      if (!f.program) continue;
      const std::string value = f.format(c);
      if (value != f.format(defaults)) args.insert(args.end(), {f.flag, value});
    }
    if (repetitions != 1) args.insert(args.end(), {"--repetitions", std::to_string(repetitions)});
    args.emplace_back("--");
    args.insert(args.end(), c.command.begin(), c.command.end());
    return args;
  }
  std::vector<std::string> args{"run", "--scenario", c.scenario_variant(), "--start", std::string(to_string(c.start)),
                                "--procs", std::to_string(c.procs)};
  const CellConfig defaults;
  for (const CellFlag& f : cell_flags()) {
    const std::string value = f.format(c);
    // Steps and seed always: a reader of the line should not need to know the defaults.
    if (value != f.format(defaults) || f.flag == "--steps" || f.flag == "--seed") {
      args.push_back(f.flag);
      args.push_back(value);
    }
  }
  if (repetitions != 1) {
    args.emplace_back("--repetitions");
    args.push_back(std::to_string(repetitions));
  }
  return args;
}

std::string shell_quote(const std::string& arg) {
  const bool plain = !arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                           "0123456789-_./:@,+=%") == std::string::npos;
  if (plain) return arg;
  std::string out = "'";
  for (char ch : arg) {
    if (ch == '\'') out += "'\\''";
    else out += ch;
  }
  return out + "'";
}

std::string repro_command(const std::string& binary, const CellConfig& cell, int repetitions) {
  std::string cmd = shell_quote(binary);
  for (const std::string& a : repro_args(cell, repetitions)) cmd += " " + shell_quote(a);
  return cmd;
}

}  // namespace sharebench
