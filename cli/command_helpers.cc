// The helpers every command shares (commands.h): one-line usage errors, closed lists of words with
// a did-you-mean, the cell flags as CLI11 options, --format and --color, running a matrix and
// reading a results file with the one-line error a user gets on bad input.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "cli/commands.h"
#include "reports/report_writers.h"
#include "harness/results/results_json.h"
#include "harness/launch/forkserver.h"
#include "harness/results/run_directory.h"
#include "harness/plan/cell_flags.h"
#include "harness/util/text.h"

namespace sharebench::cli {

std::string absolute_out_dir(const std::string& out) {
  if (out.empty()) return out;
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(out, ec);
  return ec ? out : absolute.lexically_normal().string();
}


int usage_error(const std::string& message) {
  // One line, and nothing from an argument reaches the terminal raw (an escape sequence, a stray
  // byte): control and invalid bytes are shown as \xNN.
  std::string line = message;
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::fprintf(stderr, "sharebench: error: %s\n", printable(line).c_str());
  return kExitUsage;
}

CLI::Option* add_format_option(CLI::App& cmd, std::vector<std::string>& formats, bool with_none,
                               const std::string& dir) {
  std::string help = report_formats_help(dir);
  if (with_none) help += "; none prints nothing";
  return cmd.add_option("--format", formats, help)
      ->delimiter(',')
      ->check(one_of(report_format_names(with_none)))
      ->capture_default_str();
}

CLI::Validator one_of(std::vector<std::string> known) {
  std::string description = "{";
  for (const std::string& k : known) description += (description.size() > 1 ? "," : "") + k;
  description += "}";
  return CLI::Validator(
      [known, description](std::string& value) -> std::string {
        if (std::find(known.begin(), known.end(), value) != known.end()) return "";
        const std::string guess = closest_name(value, known);
        return fmt::format("{} not in {}{}", value, description, guess.empty() ? "" : fmt::format(": did you mean {}?", guess));
      },
      description);
}

void add_cell_flag_options(CLI::App& cmd, CellFlagValues& values, const CellConfig& defaults, bool program,
                           const std::vector<std::string>& only) {
  for (const CellFlag& flag : cell_flags()) {
    if (program ? !flag.program : flag.program_only) continue;
    if (!only.empty() && std::find(only.begin(), only.end(), flag.flag) == only.end()) continue;
    const std::string& help = program && !flag.program_help.empty() ? flag.program_help : flag.help;
    CLI::Option* o = cmd.add_option(flag.flag, values[flag.flag], help)->default_str(flag.format(defaults))->type_name(flag.type_name);
    if (flag.list) o->delimiter(',');
    else o->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);  // the last one wins, as usual
  }
}

void apply_cell_flags(CellFlagValues& values, CellConfig& base) {
  for (const CellFlag& flag : cell_flags()) {
    for (const std::string& v : values[flag.flag]) flag.parse(base, v);
  }
}

void add_console_options(CLI::App& cmd, ConsoleChoice& choice) {
  cmd.add_option("--color", choice.color, "colour on the console: auto (a terminal, and NO_COLOR unset), always, never")
      ->check(one_of({"auto", "always", "never"}))
      ->capture_default_str();
  cmd.add_flag("--explain", choice.explain,
               "open the console report with how the recommendation ranks (blocks, A/A control, ties) in full, "
               "instead of its one-line legend");
}

RenderOptions ConsoleChoice::render(int fd) const {
  RenderOptions out;
  out.explain = explain;
  if (color == "always" || color == "never") {
    out.colour = color == "always";
    return out;
  }
  const char* no_color = std::getenv("NO_COLOR");  // no-color.org: set and not empty disables colour
  out.colour = ::isatty(fd) != 0 && !(no_color && *no_color);
  return out;
}


std::optional<RunOutcome> run_matrix_then_stop_forkserver(const RunnerOptions& options) {
  try {
    RunOutcome outcome = run_matrix(options);
    ForkServer::instance().stop();
    return outcome;
  } catch (const OutputPathError& e) {
    ForkServer::instance().stop();
    usage_error(e.what());
    return std::nullopt;
  }
}

std::optional<RunResult> load_results_or_report(const std::string& path) {
  try {
    return read_results_file(path);
  } catch (const ResultsFormatError& e) {
    usage_error(e.what());
    return std::nullopt;
  }
}
}  // namespace sharebench::cli
