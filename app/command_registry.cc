// The command registry's rows: the core commands (cli/) with their builders, and each feature
// wing's row from its own header (wings/).
#include "app/command_registry.h"

#include "cli/commands.h"
#include "wings/exec/exec_command.h"
#include "wings/peers/peers_command.h"
#include "wings/soak/soak_command.h"

namespace sharebench::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"run", [](CLI::App& a, const CommandLine& l) { return add_run_command(a, l.argc, l.argv); }, kCellsExitCodes},
      exec_command(),
      {"list", [](CLI::App& a, const CommandLine&) { return add_list_command(a); }, "0 done"},
      {"report", [](CLI::App& a, const CommandLine&) { return add_report_command(a); }, "0 done"},
      {"compare", [](CLI::App& a, const CommandLine&) { return add_compare_command(a); },
       "0 no regression, 1 a regression (throughput, lock wait or correctness), 4 something inconclusive under --strict"},
      {"merge", [](CLI::App& a, const CommandLine&) { return add_merge_command(a); }, "0 done"},
      {"repro", [](CLI::App& a, const CommandLine&) { return add_repro_command(a); }, kCellsExitCodes},
      soak_command(),
      peers_command(),
  };
  return table;
}

std::string command_names() {
  std::string out;
  for (const Command& c : commands()) out += (out.empty() ? "" : ", ") + c.name;
  return out;
}

}  // namespace sharebench::cli
