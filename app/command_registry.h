// The command registry: every subcommand of `sharebench` once, in the order --help lists them.
// run_cli iterates it (to add, dispatch, list the names in errors and give each --help its exit
// codes), as the runner iterates the detectors and the report writers iterate the formats: a new
// command is its own file and one row here; a feature wing's row comes from its own header.
#pragma once

#include <string>
#include <vector>

#include "cli/command.h"

namespace sharebench::cli {

const std::vector<Command>& commands();

// "run, exec, list, ...": the names in the registry's order, for errors.
std::string command_names();

}  // namespace sharebench::cli
