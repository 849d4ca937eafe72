// Command: one subcommand of `sharebench` as the registry (app/command_registry.h) holds it: its
// name, what adds it to the CLI11 app, the exit codes its --help states, and whether it takes a
// program after `--`. A feature wing (wings/) hands the registry its row from its own header.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace sharebench::cli {

// What a command's builder may need beyond the app: the whole command line (for the words CLI11
// would lose, empty values and lists), and the program: the words after `--` of a command that
// takes one (run_cli sets them aside before CLI11 parses).
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
  // `sharebench NAME [options] -- COMMAND [ARGS...]`: the words after `--` are the program's, never
  // parsed as options, and a line without them is refused.
  bool program_after_dashes = false;
};

// The exit codes of a command that runs cells.
inline constexpr const char* kCellsExitCodes =
    "0 every cell as expected, 1 a cell went against its expectation (the report says which and why)";

}  // namespace sharebench::cli
