// tree_inspection: signal, wait for the dumps, freeze, read, kill.
#include "wings/exec/tree_inspection.h"

#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "wings/exec/process_tree.h"
#include "wings/exec/program_supervisor.h"
#include "harness/watchdog/process_probe.h"

namespace sharebench {

namespace {
std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

long long file_size(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<long long>(st.st_size) : -1;
}
}  // namespace

std::map<pid_t, ProcessEvidence> inspect_and_kill_tree(const ExecBlock& block, bool gdb) {
  std::map<pid_t, ProcessEvidence> evidence;
  const pid_t supervisor = block.supervisor_pid.load();
  if (supervisor <= 0) return evidence;
  std::vector<ProcStat> tree = live_descendants(supervisor);
  // The program first, then its descendants in order of birth: the order native stacks are taken in.
  auto birth_of = [&](pid_t pid) {
    for (int i = 0; i < block.processes.load(); ++i) {
      if (block.tree[i].pid == pid && !block.tree[i].gone) return block.tree[i].birth;
    }
    return ExecBlock::kMaxProcesses + 1;
  };
  std::stable_sort(tree.begin(), tree.end(), [&](const ProcStat& a, const ProcStat& b) { return birth_of(a.pid) < birth_of(b.pid); });

  // Where each is, before anything disturbs it.
  for (const ProcStat& s : tree) evidence[s.pid].state = describe_process(s.pid);
  // Python stacks, while the processes can run faulthandler's handler. Only processes that armed it
  // (their file exists) and still run Python: the signal would kill anything else.
  std::vector<std::string> asked;
  for (const ProcStat& s : tree) {
    const std::string file = fmt::format("{}/py-{}.txt", block.stacks_dir, s.pid);
    if (file_size(file) < 0 || read_cmdline(s.pid).find("python") == std::string::npos) continue;
    if (::kill(s.pid, python_stack_signal()) == 0) asked.push_back(file);
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < until &&
         std::any_of(asked.begin(), asked.end(), [](const std::string& f) { return file_size(f) <= 0; })) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // a dump of many threads ends a little later

  for (const ProcStat& s : tree) ::kill(s.pid, SIGSTOP);
  // New processes may have been born meanwhile: freeze them too.
  for (const ProcStat& s : live_descendants(supervisor)) {
    if (std::none_of(tree.begin(), tree.end(), [&](const ProcStat& t) { return t.pid == s.pid; })) {
      ::kill(s.pid, SIGSTOP);
      tree.push_back(s);
    }
  }
  int native = 0;
  for (const ProcStat& s : tree) {
    ProcessEvidence& e = evidence[s.pid];
    if (e.state.empty()) e.state = describe_process(s.pid);  // born during the inspection
    e.python_stack = read_all(fmt::format("{}/py-{}.txt", block.stacks_dir, s.pid));
    if (gdb && native < kMaxNativeStacks) {
      e.native_stack = gdb_stacks(s.pid);
      ++native;
    } else if (gdb) {
      e.native_stack = fmt::format("(not taken: native stacks are taken for {} processes at most)", kMaxNativeStacks);
    }
  }
  for (const ProcStat& s : tree) ::kill(s.pid, SIGKILL);
  return evidence;
}

}  // namespace sharebench
