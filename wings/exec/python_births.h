// python_births: a descriptor that becomes readable the moment a Python process of the program
// starts. Every such process makes STACKS_DIR/py-<pid>.txt as it starts (the injected
// sitecustomize, and again in each forked child), and then writes a byte into the FIFO
// STACKS_DIR/births that this class makes and reads (kFifoName; sitecustomize.py names it too). exec's
// supervisor sleeps on it beside the program's pidfd, and scans the tree at once, instead of at its
// next scan of /proc, so it can scan seldom while the tree does not change (program_supervisor.cc):
// a forked worker that lives a few milliseconds is still seen, and a trainer's two workers pay for
// fewer scans. Processes that are not Python (a shell, torch_shm_manager) are found by the scans.
// A FIFO, not an inotify watch on the directory: closing an inotify instance waits for an RCU grace
// period, 5-15 ms at the end of every run.
#pragma once

#include <string>

namespace sharebench {

class PythonBirths {
 public:
  static constexpr const char* kFifoName = "births";

  explicit PythonBirths(const std::string& stacks_dir);
  ~PythonBirths();
  PythonBirths(const PythonBirths&) = delete;
  PythonBirths& operator=(const PythonBirths&) = delete;

  // Readable when a Python process started since the last take(); -1 where the FIFO could not be
  // made (the supervisor then scans at its young pace throughout).
  int fd() const { return read_fd_; }
  // Whether a Python process started since the last call; empties the FIFO.
  bool take();

 private:
  int read_fd_ = -1;
  int write_fd_ = -1;  // held open so that the FIFO always has a writer: no POLLHUP between births
};

}  // namespace sharebench
