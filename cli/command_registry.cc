// The command registry's rows: each command's name, builder and exit codes.
#include "cli/command_registry.h"

#include "cli/commands.h"

namespace sharebench::cli {

namespace {
const char* const kCellsExitCodes =
    "0 every cell as expected, 1 a cell went against its expectation (the report says which and why)";
}  // namespace

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"run", [](CLI::App& a, const CommandLine& l) { return add_run_command(a, l.argc, l.argv); }, kCellsExitCodes},
      {"exec", [](CLI::App& a, const CommandLine& l) { return add_exec_command(a, l.argc, l.argv, l.program); },
       kCellsExitCodes},
      {"list", [](CLI::App& a, const CommandLine&) { return add_list_command(a); }, "0 done"},
      {"report", [](CLI::App& a, const CommandLine&) { return add_report_command(a); }, "0 done"},
      {"compare", [](CLI::App& a, const CommandLine&) { return add_compare_command(a); },
       "0 no regression, 1 a regression (throughput, lock wait or correctness), 4 something inconclusive under --strict"},
      {"merge", [](CLI::App& a, const CommandLine&) { return add_merge_command(a); }, "0 done"},
      {"repro", [](CLI::App& a, const CommandLine&) { return add_repro_command(a); }, kCellsExitCodes},
      {"soak", [](CLI::App& a, const CommandLine& l) { return add_soak_command(a, l.argc, l.argv); }, kCellsExitCodes},
      {"peers", [](CLI::App& a, const CommandLine& l) { return add_peers_command(a, l.argc, l.argv); },
       "0 every round measured (and, with --baseline, no ratio fell beyond its tolerance), 1 a side failed or a ratio "
       "fell"},
  };
  return table;
}

std::string command_names() {
  std::string out;
  for (const Command& c : commands()) out += (out.empty() ? "" : ", ") + c.name;
  return out;
}

}  // namespace sharebench::cli
