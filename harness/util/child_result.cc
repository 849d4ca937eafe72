// compute_in_child: fork, run, send the bytes back through a pipe, _exit; the parent reads and reaps.
#include "harness/util/child_result.h"
#include "harness/util/parent_death.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>


namespace sharebench {

namespace {
constexpr char kAnswer = 'A';  // first byte: the answer follows
constexpr char kError = 'E';   // first byte: the exception's message follows

void write_all(int fd, const std::string& bytes) {
  const char* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}
}  // namespace

std::string compute_in_child(const std::function<std::string()>& work, double timeout_s) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error(fmt::format("pipe: {}", std::strerror(errno)));
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {
    const int e = errno;
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    throw std::runtime_error(fmt::format("fork: {}", std::strerror(e)));
  }
  if (child == 0) {
    die_with_parent(parent);
    ::close(pipe_fds[0]);
    int code = 0;
    try {
      write_all(pipe_fds[1], std::string(1, kAnswer) + work());
    } catch (const std::exception& e) {
      write_all(pipe_fds[1], std::string(1, kError) + e.what());
      code = 1;
    } catch (...) {
      write_all(pipe_fds[1], std::string(1, kError) + "unknown exception");
      code = 1;
    }
    ::_exit(code);  // no atexit handler, no destructor of the caller's state runs twice
  }
  ::close(pipe_fds[1]);
  std::string bytes;
  bool timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  char buffer[65536];
  for (;;) {
    const auto left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left_ms <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{pipe_fds[0], POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left_ms, 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) continue;
    if (ready < 0) break;
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // the child closed its end: it is done
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  if (timed_out) ::kill(child, SIGKILL);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) throw std::runtime_error(fmt::format("no answer within {:g} s (the child was killed)", timeout_s));
  if (!bytes.empty() && bytes[0] == kError) throw std::runtime_error(bytes.substr(1));
  if (bytes.empty() || bytes[0] != kAnswer || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error(WIFSIGNALED(status) ? fmt::format("the child died of signal {}", WTERMSIG(status))
                                                 : std::string("the child exited without an answer"));
  }
  return bytes.substr(1);
}

}  // namespace sharebench
