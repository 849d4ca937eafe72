// peer_program: the strategy table and the peer program's run (peer_program.h).
#include "wings/peers/peer_program.h"
#include "harness/util/bounded_json.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/housekeeping/private_dir.h"
#include "harness/util/interrupt.h"
#include "harness/util/parent_death.h"

extern const char* const kTorchMpPeerSource;  // generated from wings/peers/torch_mp_peer.py

namespace sharebench {

const std::vector<PeerStrategy>& peer_strategies() {
  static const std::vector<PeerStrategy> table = {
      {"inference/read-only", "inference"},
      {"hogwild/lock-free", "hogwild"},
      {"locked/whole-step", "locked-whole-step"},
      {"locked/update-only", "locked-update-only"},
      {"averaging/params-shm", "averaging-params"},
      {"averaging/grads-shm", "averaging-grads"},
      {"averaging/params-gloo", "averaging-params-gloo"},
      {"averaging/grads-gloo", "averaging-grads-gloo"},
      {"a3c/locked", "a3c-locked"},
      {"a3c/hogwild", "a3c-hogwild"},
  };
  return table;
}

std::optional<std::string> peer_for(const std::string& scenario, const std::string& variant) {
  const std::string cell = scenario + "/" + variant;
  for (const PeerStrategy& s : peer_strategies()) {
    if (s.cell == cell) return s.peer;
  }
  return std::nullopt;
}

const char* peer_program_source() { return kTorchMpPeerSource; }

namespace {
using Clock = std::chrono::steady_clock;

std::string last_line(const std::string& text) {
  std::size_t end = text.find_last_not_of("\n");
  if (end == std::string::npos) return "";
  const std::size_t begin = text.rfind('\n', end);
  return text.substr(begin == std::string::npos ? 0 : begin + 1, end - (begin == std::string::npos ? 0 : begin + 1) + 1);
}

std::string tail_lines(const std::string& text, std::size_t lines) {
  std::vector<std::string> kept;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    if (end > begin) kept.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  if (kept.size() > lines) kept.erase(kept.begin(), kept.end() - static_cast<std::ptrdiff_t>(lines));
  std::string out;
  for (const std::string& line : kept) out += (out.empty() ? "" : " | ") + line;
  return out;
}

// The intermediate process: a child subreaper in a process group of its own; runs the program,
// then reaps whatever the program left behind, and exits with the program's status.
[[noreturn]] void reap_program(const std::vector<std::string>& argv, int out_fd, const std::string& stderr_path, pid_t parent) {
  die_with_parent(parent, SIGKILL, 127);
  ::setpgid(0, 0);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int err = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const pid_t program = ::fork();
  if (program == 0) {
    ::dup2(out_fd, STDOUT_FILENO);
    if (err >= 0) ::dup2(err, STDERR_FILENO);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(out_fd);
  int status = 0, program_status = 127 << 8;
  pid_t reaped;
  while ((reaped = ::waitpid(-1, &status, 0)) > 0 || errno == EINTR) {
    if (reaped == program) program_status = status;
  }
  if (WIFEXITED(program_status)) ::_exit(WEXITSTATUS(program_status));
  ::_exit(128 + (WIFSIGNALED(program_status) ? WTERMSIG(program_status) : 0));
}
// Reads the program's stdout until the reaper exits; kills the whole group at the deadline or on
// an interrupt (and reaps what this process inherits of it). Returns whether it killed.
bool collect_until_exit(pid_t reaper, int fd, Clock::time_point deadline, std::string& out, int& status) {
  bool exited = false, killed = false;
  while (!exited) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 100) > 0) {
      char buf[4096];
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n > 0) out.append(buf, static_cast<std::size_t>(n));
      if (n == 0) ::usleep(10'000);  // the program closed its stdout; wait for its exit
    }
    if (::waitpid(reaper, &status, WNOHANG) == reaper) exited = true;
    if (!exited && (Clock::now() > deadline || interrupt_requested())) {
      ::kill(-reaper, SIGKILL);
      killed = true;
      ::waitpid(reaper, &status, 0);
      // The killed tree's processes become this process's children when it is a subreaper (the
      // runner is): reap them by their process group, for a moment at most.
      for (int i = 0; i < 200 && ::waitpid(-reaper, nullptr, WNOHANG) >= 0; ++i) ::usleep(10'000);
      exited = true;
    }
  }
  for (;;) {  // what is left in the pipe
    char buf[4096];
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) break;
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return killed;
}
}  // namespace

PeerProgramResult run_peer_program(const std::string& python, const std::string& script, const std::string& peer,
                                   const CellConfig& cell, double timeout_s, const std::string& stderr_path) {
  const WorkloadOptions& w = cell.workload;
  const std::vector<std::string> argv = {python,        script,
                                         peer,          "--procs",
                                         std::to_string(cell.procs), "--steps",
                                         std::to_string(w.steps), "--batch",
                                         std::to_string(w.batch), "--input",
                                         std::to_string(w.input), "--hidden",
                                         std::to_string(w.hidden), "--classes",
                                         std::to_string(w.classes), "--lr",
                                         fmt::format("{}", w.lr), "--start",
                                         std::string(to_string(cell.start))};
  PeerProgramResult result;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    result.error = fmt::format("pipe: {}", std::strerror(errno));
    return result;
  }
  const auto t0 = Clock::now();
  const pid_t parent = ::getpid();
  const pid_t reaper = ::fork();
  if (reaper < 0) {
    result.error = fmt::format("fork: {}", std::strerror(errno));
    ::close(fds[0]);
    ::close(fds[1]);
    return result;
  }
  if (reaper == 0) {
    ::close(fds[0]);
    const int out = ::fcntl(fds[1], F_DUPFD, 3);  // without O_CLOEXEC, for the program's stdout
    reap_program(argv, out, stderr_path, parent);
  }
  ::setpgid(reaper, reaper);  // both sides set it: no window where a kill of the group misses
  ::close(fds[1]);
  std::string out;
  int status = 0;
  const bool killed = collect_until_exit(reaper, fds[0], t0 + std::chrono::duration_cast<Clock::duration>(
                                                             std::chrono::duration<double>(timeout_s)),
                                         out, status);
  if (killed) result.error = interrupt_requested() ? "interrupted" : fmt::format("still running after {:.0f} s: killed", timeout_s);
  ::close(fds[0]);
  result.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (killed) return result;
  const std::string stderr_tail = tail_lines(read_file_tail(stderr_path, 4096), 3);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    result.error = fmt::format("{} {} exited with {}{}{}", python, peer,
                               WIFEXITED(status) ? fmt::format("status {}", WEXITSTATUS(status))
                                                 : fmt::format("signal {}", WTERMSIG(status)),
                               stderr_tail.empty() ? "" : ": ", stderr_tail);
    return result;
  }
  try {
    const auto j = parse_json_bounded(last_line(out));
    result.steps_per_s = j.at("steps_per_s").get<double>();
  } catch (const std::exception& e) {
    result.error = fmt::format("{} {} printed no figure ({}): '{}'", python, peer, e.what(), last_line(out));
  }
  return result;
}

}  // namespace sharebench
