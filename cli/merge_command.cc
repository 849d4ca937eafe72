// `sharebench merge A.json B.json ... --out DIR`: joins the shards of a sharded run (or whole runs)
// into DIR/results.json. Exit 0 when every cell of the merge is as expected, 1 when one is not
// (as `run` would have), 2 when the files do not make one run.
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "cli/commands.h"
#include "harness/results/merge.h"
#include "harness/results/results_json.h"
#include "harness/results/run_directory.h"

namespace sharebench::cli {

std::function<int()> add_merge_command(CLI::App& app) {
  struct Flags {
    std::vector<std::string> inputs;
    std::string out;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("merge", "join the results files of a sharded run (run --shard K/N) into one");
  cmd->add_option("results", f->inputs, "the shards' results.json files")->required();
  cmd->add_option("--out", f->out, "directory for the merged results.json")->required();
  return [f] {
    std::vector<RunResult> parts;
    for (const std::string& path : f->inputs) {
      std::optional<RunResult> r = load_results_or_report(path);
      if (!r) return kExitUsage;
      parts.push_back(std::move(*r));
    }
    RunResult merged;
    try {
      merged = merge_runs(parts);
    } catch (const ResultsFormatError& e) {
      return usage_error(std::string("merge: ") + e.what());
    }
    // The inputs' privacy goes with them: exec's results (a program's output) are their owner's.
    merged.readable_results = std::all_of(parts.begin(), parts.end(), [](const RunResult& r) { return !keeps_program_output_private(r); });
    const bool owner_only = keeps_program_output_private(merged);
    const std::string path = f->out + "/results.json";
    try {
      prepare_output_folder(f->out, "--out", owner_only);
      write_file_atomically(path, dump_json(results_to_json(merged), 1) + "\n", owner_only ? 0600 : 0644);
    } catch (const std::runtime_error& e) {
      return usage_error(e.what());
    }
    int unexpected = 0;
    for (const CellResult& c : merged.cells) unexpected += c.outcome().red() ? 1 : 0;
    std::printf("wrote %s: %zu cells from %zu file(s), %d unexpected\n", path.c_str(), merged.cells.size(),
                parts.size(), unexpected);
    return unexpected == 0 ? kExitOk : kExitUnexpected;
  };
}

}  // namespace sharebench::cli
