// python_births: the births FIFO in the stacks directory; see python_births.h.
#include "wings/exec/python_births.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace sharebench {

PythonBirths::PythonBirths(const std::string& stacks_dir) {
  const std::string path = stacks_dir + "/" + kFifoName;
  if (::mkfifo(path.c_str(), 0600) != 0 && errno != EEXIST) return;
  read_fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (read_fd_ < 0) return;
  write_fd_ = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (write_fd_ < 0) {
    ::close(read_fd_);
    read_fd_ = -1;
  }
}

PythonBirths::~PythonBirths() {
  if (write_fd_ >= 0) ::close(write_fd_);
  if (read_fd_ >= 0) ::close(read_fd_);
}

bool PythonBirths::take() {
  if (read_fd_ < 0) return false;
  bool any = false;
  char bytes[512];
  for (;;) {
    const ssize_t n = ::read(read_fd_, bytes, sizeof bytes);
    if (n > 0) {
      any = true;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return any;  // EAGAIN: drained
  }
}

}  // namespace sharebench
