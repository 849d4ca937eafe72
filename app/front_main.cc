// The sharebench command a user types: the command line without LibTorch. Loading LibTorch (about
// 290 shared libraries and its operator registration) costs half a second and 160 MiB before
// main; `--version`, `list`, `report`, `compare`, `merge`, `repro` and `exec` (its runner,
// supervisor and guard watch a Python program and touch no tensor) do not pay it here.
//
// The commands that run LibTorch work (`run`, `soak`, `peers`: their workers and the serial
// reference) replace this process with the LibTorch binary, sharebench-torch (app/main.cc), with
// the same arguments: the same pid, descriptors, signal state and argv[0], so Ctrl-C, exit codes
// and every message are the ones that binary gives. Its spawn workers re-execute it, not this front.
// `list` reads the catalog that binary wrote when it was built (sharebench-scenarios.json beside it).
//
// A project with its own scenarios links them and run_cli into one binary of its own (app/main.cc's
// shape); nothing here is part of that.
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/run_cli.h"
#include "cli/commands.h"
#include "harness/env/environment.h"

namespace {
namespace fs = std::filesystem;

constexpr const char kTorchBinaryName[] = "sharebench-torch";
constexpr const char kCatalogName[] = "sharebench-scenarios.json";

// The commands whose work is LibTorch's, and so the LibTorch binary's.
bool runs_libtorch_work(std::string_view command) { return command == "run" || command == "soak" || command == "peers"; }

// The command word: the first argument that is not an option (`sharebench --help run` is help).
std::string_view command_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] != '-') return argv[i];
    if (std::string_view(argv[i]) == "--") break;
  }
  return {};
}

fs::path self_directory() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return {};
  return fs::path(std::string(buf, static_cast<std::size_t>(n))).parent_path();
}

// Beside this binary in a build tree; ../libexec/sharebench/ in an installed tree.
std::optional<fs::path> torch_binary(std::string* looked_in) {
  const fs::path dir = self_directory();
  for (const fs::path& candidate : {dir / kTorchBinaryName, dir.parent_path() / "libexec" / "sharebench" / kTorchBinaryName}) {
    *looked_in += (looked_in->empty() ? "" : ", ") + candidate.string();
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

[[noreturn]] void become_torch_binary(int argc, char** argv) {
  std::string looked_in;
  const std::optional<fs::path> binary = torch_binary(&looked_in);
  if (!binary) {
    std::fprintf(stderr,
                 "sharebench: %s needs the LibTorch part of sharebench, %s, which is missing (looked in %s): build the "
                 "target sharebench_torch_binary, or reinstall\n",
                 command_word(argc, argv).data(), kTorchBinaryName, looked_in.c_str());
    std::exit(sharebench::cli::kExitInternal);
  }
  ::execv(binary->c_str(), argv);  // argv[0] kept: help and messages name the command the user typed
  std::fprintf(stderr, "sharebench: cannot start %s: %s\n", binary->c_str(), std::strerror(errno));
  std::exit(sharebench::cli::kExitInternal);
}

// `list` without LibTorch: the catalog written beside the LibTorch binary when it was built. Where
// it is missing (its writing failed, or an install lost it) the LibTorch binary answers itself.
std::optional<nlohmann::json> built_catalog(int argc, char** argv) {
  std::string looked_in;
  const std::optional<fs::path> binary = torch_binary(&looked_in);
  if (binary) {
    std::ifstream in(binary->parent_path() / kCatalogName);
    if (in) {
      try {
        return nlohmann::json::parse(in);
      } catch (const nlohmann::json::exception&) {
        // fall through: a damaged catalog is not the answer; the binary is
      }
    }
  }
  become_torch_binary(argc, argv);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string_view command = command_word(argc, argv);
  if (runs_libtorch_work(command)) {
    become_torch_binary(argc, argv);
  }
  sharebench::set_environment_fact("libtorch", SHAREBENCH_LIBTORCH_VERSION);
  sharebench::set_environment_fact("blas", "none: this command loads no LibTorch (a run's results name the BLAS LibTorch loads)");
  sharebench::cli::use_scenario_catalog([argc, argv] { return built_catalog(argc, argv); });
  return sharebench::run_cli(argc, argv);
}
