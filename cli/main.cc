// sharebench's entry point. Before anything else it checks for spawn's hidden worker mode; the run
// command starts the forkserver before LibTorch is initialised.
#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "harness/launch/launcher.h"

int main(int argc, char** argv) {
  int worker_exit = 0;
  if (sharebench::maybe_run_as_worker(argc, argv, &worker_exit)) return worker_exit;

  CLI::App app{"sharebench: benchmark and check strategies for sharing one PyTorch model between processes"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "sharebench 0.1.0");
  auto run = sharebench::cli::add_run_command(app, argc, argv);
  auto list = sharebench::cli::add_list_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "sharebench: error: %s (see --help)\n", e.what());
    return sharebench::cli::kExitUsage;
  }
  try {
    for (CLI::App* sub : app.get_subcommands()) {
      if (sub->get_name() == "run") return run();
      if (sub->get_name() == "list") return list();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sharebench: internal error: %s\n", e.what());
    return sharebench::cli::kExitInternal;
  }
  return sharebench::cli::kExitInternal;
}
