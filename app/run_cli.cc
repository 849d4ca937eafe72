// The sharebench command line as a library function, so a project with its own scenarios can make
// its own binary with every command (examples/counter). Before anything else it checks for spawn's
// hidden worker mode; the run command starts the forkserver before LibTorch is initialised.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>

#include <filesystem>

#include <fmt/format.h>

#include "app/command_registry.h"
#include "cli/commands.h"
#include "reports/report_writers.h"
#include "app/run_cli.h"
#include "git_revision.h"  // SHAREBENCH_GIT_REVISION, written at build time (cmake/git_revision.cmake)
#include "harness/results/results_json.h"
#include "harness/launch/forkserver.h"
#include "harness/launch/launcher.h"
#include "harness/env/environment.h"
#include "harness/results/run_directory.h"
#include "harness/plan/cell_flags.h"
#include "harness/util/inherited_state.h"
#include "harness/util/text.h"

namespace sharebench::cli {
namespace {

std::string exit_codes_text(const std::string& command) {
  std::string ok = commands().front().exit_codes;  // the top level: run's
  for (const Command& c : commands()) {
    if (c.name == command) ok = c.exit_codes;
  }
  return fmt::format("\nExit codes: {}, 2 bad input or an unusable output folder: a full disk, one held by another run (one line on stderr), 3 internal error, 128+n interrupted by signal n "
                     "(130 for Ctrl-C; results so far kept).\n",
                     ok);
}

std::string version_text() {
  const auto env = collect_environment();
  auto get = [&](const char* k) {
    auto it = env.find(k);
    return it == env.end() ? std::string("unknown") : it->second;
  };
  return fmt::format("sharebench {} (git {})\nLibTorch {}\nBLAS {}{}\ncompiler {}\n", SHAREBENCH_VERSION,
                     SHAREBENCH_GIT_REVISION, get("libtorch"), get("blas"),
                     env.count("blas_config") ? " (" + env.at("blas_config") + ")" : std::string(), get("compiler"));
}

// An empty value (`--blocks ''`, `--budget ''`, `exec --out ''`) or an empty item of a list
// (`--mp-start fork,,`, `--scenario a,`): refused, as any other bad value is. The options keep text,
// where "" meant "not given", so these fell back to the defaults; CLI11 drops a list's empty items.
std::string empty_value_in(const CLI::App& app, int argc, char** argv) {
  for (const CLI::App* sub : app.get_subcommands()) {
    for (const CLI::Option* opt : sub->get_options()) {
      if (opt->count() == 0 || opt->get_expected_min() == 0) continue;  // not given, or a flag
      std::vector<std::string> names;
      for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
      for (const std::string& n : opt->get_snames()) names.push_back("-" + n);
      if (names.empty()) continue;  // a positional
      const std::string& name = names.front();
      for (const std::string& v : opt->results()) {
        if (v.empty()) return fmt::format("{} was given an empty value", name);
      }
      if (opt->get_delimiter() == '\0') continue;
      for (int i = 2; i < argc; ++i) {
        const std::string arg = argv[i];
        std::string value;
        bool matched = false;
        for (const std::string& n : names) {
          if (arg == n && i + 1 < argc) value = argv[i + 1], matched = true;
          else if (arg.rfind(n + "=", 0) == 0) value = arg.substr(n.size() + 1), matched = true;
        }
        if (!matched) continue;
        const std::string d(1, opt->get_delimiter());
        if (value.empty() || value.find(d + d) != std::string::npos || value.front() == d[0] || value.back() == d[0]) {
          return fmt::format("{} must be a comma-separated list without empty elements, got '{}'", name, value);
        }
      }
    }
  }
  return "";
}

}  // namespace
}  // namespace sharebench::cli

namespace sharebench {

int run_cli(int argc, char** argv) {
  reset_inherited_process_state();  // closed 0-2, a blocked mask, an ignored SIGCHLD: before anything opens or forks
  int worker_exit = 0;
  if (sharebench::maybe_run_as_worker(argc, argv, &worker_exit)) return worker_exit;
  // The build that made a run, in its results and every report: `compare` names both and warns
  // where they differ.
  set_environment_fact("sharebench_build", fmt::format("sharebench {} (git {}, {})", SHAREBENCH_VERSION,
                                                       SHAREBENCH_GIT_REVISION, SHAREBENCH_BUILD_TYPE));
  set_environment_fact("build_type", SHAREBENCH_BUILD_TYPE);
  // Every argument may end up in a results file, which is JSON, hence UTF-8: refuse anything else
  // here, before a run directory is made, rather than fail when the file is written.
  for (int i = 1; i < argc; ++i) {
    if (!is_valid_utf8(argv[i])) {
      return sharebench::cli::usage_error(
          fmt::format("argument {} ('{}') is not UTF-8: arguments must be UTF-8 text (they are kept in the JSON results)",
                      i, argv[i]));
    }
  }

  CLI::App app{"sharebench: benchmark and check strategies for sharing one PyTorch model between processes"};
  app.require_subcommand(0, 1);
  bool version = false;
  app.add_flag("--version", version, "print the version, git revision, LibTorch and BLAS, and exit");
  // `NAME [options] -- COMMAND [ARGS...]` (exec): the program's words are set aside, so no option of
  // its own is taken for one of the command's (or the app's).
  std::vector<std::string> program;
  int parsed_argc = argc;
  const sharebench::cli::Command* named = nullptr;
  for (const sharebench::cli::Command& c : sharebench::cli::commands()) {
    if (argc > 1 && c.name == argv[1]) named = &c;
  }
  if (named != nullptr && named->program_after_dashes) {
    for (int i = 2; i < argc; ++i) {
      if (std::string_view(argv[i]) == "--") {
        program.assign(argv + i + 1, argv + argc);
        parsed_argc = i;
        break;
      }
    }
    bool help = false;
    for (int i = 2; i < parsed_argc; ++i) help |= std::string_view(argv[i]) == "-h" || std::string_view(argv[i]) == "--help";
    if (parsed_argc == argc && !help) {
      return sharebench::cli::usage_error(fmt::format(
          "{0} runs the program given after --: sharebench {0} [options] -- COMMAND [ARGS...]", named->name));
    }
  }
  const sharebench::cli::CommandLine line{argc, argv, program};
  std::map<std::string, std::function<int()>> actions;
  for (const sharebench::cli::Command& c : sharebench::cli::commands()) actions[c.name] = c.add(app, line);
  for (CLI::App* sub : app.get_subcommands({})) sub->footer(sub->get_footer() + sharebench::cli::exit_codes_text(sub->get_name()));
  app.footer(sharebench::cli::exit_codes_text(""));
  try {
    app.parse(parsed_argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (argc > 1 && argv[1][0] != '-' && app.get_subcommands().empty()) {
      bool known = false;
      for (const CLI::App* sub : app.get_subcommands({})) known |= sub->get_name() == argv[1];
      if (!known) {
        std::vector<std::string> names;
        for (const sharebench::cli::Command& c : sharebench::cli::commands()) names.push_back(c.name);
        const std::string guess = closest_name(argv[1], names);
        return sharebench::cli::usage_error(fmt::format("unknown command '{}' ({}{}; see --help)", argv[1],
                                                        guess.empty() ? "" : "did you mean " + guess + "? ",
                                                        sharebench::cli::command_names()));
      }
    }
    return sharebench::cli::usage_error(std::string(e.what()) + " (see --help)");
  }
  if (const std::string empty = sharebench::cli::empty_value_in(app, parsed_argc, argv); !empty.empty()) {
    return sharebench::cli::usage_error(empty + ": give a value, or leave the option out for its default (see --help)");
  }
  if (version) {
    std::fputs(sharebench::cli::version_text().c_str(), stdout);
    return 0;
  }
  if (app.get_subcommands().empty()) {
    return sharebench::cli::usage_error(
        fmt::format("a command is required: one of {} (see --help)", sharebench::cli::command_names()));
  }
  try {
    return actions.at(app.get_subcommands().front()->get_name())();  // one at most: require_subcommand(0, 1)
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sharebench: internal error: %s\n", e.what());
    return sharebench::cli::kExitInternal;
  }
}

}  // namespace sharebench
