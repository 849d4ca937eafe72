// `sharebench report RESULTS --format F[,F...] [--out DIR]`: renders a results file in other
// formats. Foreign or malformed files get one line and exit 2.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "harness/results/results_json.h"
#include "harness/results/run_directory.h"
#include "reports/console_report.h"
#include "reports/report_writers.h"

namespace sharebench::cli {

std::function<int()> add_report_command(CLI::App& app) {
  struct Flags {
    std::string results, out;
    ConsoleChoice console;
    std::vector<std::string> formats{"md"};
  };
  auto f = std::make_shared<Flags>();
  // The formats from their registry: a list written here by hand once left two out.
  CLI::App* cmd = app.add_subcommand(
      "report", fmt::format("render a results file as {}", fmt::join(report_format_names(/*with_none=*/false), ", ")));
  cmd->add_option("results", f->results, "a results.json written by sharebench run")->required();
  add_format_option(*cmd, f->formats, false, "the output directory");
  add_console_options(*cmd, f->console);
  cmd->add_option("--out", f->out, "directory for the files (default: the results file's directory)");
  return [f] {
    const std::optional<RunResult> loaded = load_results_or_report(f->results);
    if (!loaded) return kExitUsage;
    const RunResult& run = *loaded;
    namespace fs = std::filesystem;
    std::string dir = f->out;
    if (dir.empty()) dir = fs::path(f->results).parent_path().string();
    if (dir.empty()) dir = ".";
    try {
      prepare_output_folder(dir, f->out.empty() ? "the results file's folder" : "--out", keeps_program_output_private(run));
      for (const std::string& path : write_reports(run, f->formats, dir)) std::fprintf(stderr, "wrote %s\n", path.c_str());
    } catch (const std::runtime_error& e) {
      return usage_error(e.what());
    }
    print_reports(run, f->formats, f->console.render(STDOUT_FILENO), stdout);
    return kExitOk;
  };
}

}  // namespace sharebench::cli
