// `sharebench repro RESULTS CELL [--under gdb|tsan]`: re-runs exactly one cell of a results file
// (same scenario, variant, start method, process count, seed and options).
//   --under gdb   the hang forensics take every stuck thread's stack with gdb
//   --under tsan  the ThreadSanitizer build runs the cell with the thread start method, with the
//                 repository's suppressions (ci/tsan.supp): TSan sees races and lock-order
//                 inversions between threads, not between processes.
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "harness/results/results_json.h"
#include "harness/runner/runner.h"
#include "harness/plan/cell_flags.h"
#include "harness/watchdog/process_probe.h"

namespace sharebench::cli {

namespace {
namespace fs = std::filesystem;

std::string self_path() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "sharebench";
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}
}  // namespace

std::function<int()> add_repro_command(CLI::App& app) {
  struct Flags {
    std::string results, cell, under;
    bool dry_run = false, yes = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("repro", "re-run exactly one cell of a results file");
  cmd->add_option("results", f->results, "a results.json")->required();
  cmd->add_option("cell", f->cell, "the cell id, as in the report: scenario/variant@start:procs")->required();
  cmd->add_option("--under", f->under, "gdb (stacks of stuck workers) or tsan (ThreadSanitizer build, thread mode)")
      ->check(one_of({"gdb", "tsan"}));
  cmd->add_flag("--dry-run", f->dry_run, "print the command instead of running it");
  cmd->add_flag("--yes", f->yes, "run an exec cell's program even from a results file another user owns");
  return [f] {
    const std::optional<RunResult> loaded = load_results_or_report(f->results);
    if (!loaded) return kExitUsage;
    const RunResult& run = *loaded;
    const CellResult* found = nullptr;
    std::string ids;
    for (const auto& c : run.cells) {
      if (c.config.id() == f->cell) found = &c;
      ids += (ids.empty() ? "" : ", ") + c.config.id();
    }
    if (!found) return usage_error(fmt::format("no cell '{}' in {} (cells: {})", f->cell, f->results, ids));

    CellConfig cell = found->config;
    std::string binary = self_path();
    if (f->under == "tsan" && !cell.command.empty()) {
      return usage_error("--under tsan runs a cell's workers as threads; an exec cell runs a program of its own");
    }
    if (f->under == "tsan") {
      cell.start = StartMethod::kThread;
      binary = env_or("SHAREBENCH_TSAN_BINARY", (fs::path(binary).parent_path().parent_path() / "build-tsan" / "sharebench").string());
      if (::access(binary.c_str(), X_OK) != 0) {
        return usage_error(fmt::format("no ThreadSanitizer build at {} (build it: cmake --preset tsan && cmake --build "
                                       "--preset tsan, or set SHAREBENCH_TSAN_BINARY)", binary));
      }
      const std::string supp = env_or("SHAREBENCH_TSAN_SUPPRESSIONS", SHAREBENCH_SOURCE_DIR "/ci/tsan.supp");
      const std::string options = fmt::format("suppressions={} die_after_fork=0 second_deadlock_stack=1 halt_on_error=0 {}", supp,
                                              env_or("TSAN_OPTIONS", ""));
      ::setenv("TSAN_OPTIONS", options.c_str(), 1);
    }
    if (f->under == "gdb") {
      if (!gdb_available()) return usage_error("--under gdb: gdb is not installed");
      cell.stacks = "gdb";
    }
    std::vector<std::string> args = repro_args(cell, 1);
    std::string line = shell_quote(binary);
    for (const auto& a : args) line += " " + shell_quote(a);
    if (f->dry_run) {
      std::printf("%s%s\n", f->under == "tsan" ? ("TSAN_OPTIONS=" + shell_quote(std::getenv("TSAN_OPTIONS")) + " ").c_str() : "",
                  line.c_str());
      return kExitOk;
    }
    if (!cell.command.empty() && !f->yes) {
      // An exec cell runs whatever its results file says: from a file someone else wrote (a CI
      // artifact, a colleague's run), say what that is and run nothing until asked.
      struct stat st {};
      if (::stat(f->results.c_str(), &st) == 0 && st.st_uid != ::geteuid()) {
        return usage_error(fmt::format("{} is not yours (owner uid {}): its cell would run `{}` in {}; read it, then "
                                       "add --yes to run it",
                                       f->results, st.st_uid, fmt::join(cell.command, " "), cell.workdir));
      }
    }
    std::fprintf(stderr, "sharebench repro: %s\n", line.c_str());
    if (!cell.command.empty()) {
      std::fprintf(stderr, "sharebench repro: the cell runs the program `%s` in %s\n", fmt::format("{}", fmt::join(cell.command, " ")).c_str(),
                   cell.workdir.c_str());
    }
    std::vector<char*> argv{const_cast<char*>(binary.c_str())};
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::fflush(nullptr);
    ::execv(binary.c_str(), argv.data());
    std::perror("sharebench repro: exec");
    return kExitInternal;
  };
}

}  // namespace sharebench::cli
