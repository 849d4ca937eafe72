// The command registry: every subcommand of `sharebench` once, with what adds it to the CLI11 app
// and the exit codes its --help states. run_cli iterates it (to add, dispatch, list the names in
// errors and give each --help its exit codes), as the runner iterates the detectors and the report
// writers iterate the formats: a new command is one row here and its own file.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace sharebench::cli {

// What a command's builder may need beyond the app: the whole command line (for the words CLI11
// would lose, empty values and lists), and exec's program, the words after its `--`.
struct CommandLine {
  int argc = 0;
  char** argv = nullptr;
  std::vector<std::string> program;
};

struct Command {
  std::string name;
  // Adds the subcommand to `app`; returns the action to run once the line is parsed.
  std::function<std::function<int()>(CLI::App& app, const CommandLine& line)> add;
  // What exit code 0 (and 1, 4 where they differ) mean for it; the common codes follow in --help.
  std::string exit_codes;
};

const std::vector<Command>& commands();

// "run, exec, list, ...": the names in the registry's order, for errors.
std::string command_names();

}  // namespace sharebench::cli
