// Waiting for processes to end through pidfds: see process_end.h.
#include "harness/util/process_end.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace sharebench {

int open_process_end(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

bool wait_for_an_end(const std::vector<int>& fds, std::chrono::milliseconds timeout) {
  std::vector<struct pollfd> watched;
  for (int fd : fds) {
    if (fd >= 0) watched.push_back(pollfd{fd, POLLIN, 0});
  }
  if (watched.empty()) return false;
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    // Rounded up: a timeout rounded down to 0 ms would make a caller's loop spin through its last
    // millisecond.
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    const int n = ::poll(watched.data(), watched.size(), static_cast<int>(std::max<long long>(0, left.count())));
    if (n >= 0) return true;
    if (errno != EINTR) return false;
  }
}

}  // namespace sharebench
