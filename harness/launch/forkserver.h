// ForkServer: a small process forked from the runner at start-up, before any thread exists and
// before LibTorch runs an op, that forks workers on request. Workers forked from it start from
// that clean state however much memory or how many threads the runner has since acquired
// (the `forkserver` start method of Python's multiprocessing, in C++).
//
// Protocol, one Unix stream connection per worker, on a socket in a private 0700 directory:
//   runner → server  Request header + cell JSON, with the arena fd attached (SCM_RIGHTS)
//   server → runner  int32 pid of the forked worker (or -errno)
//   server → runner  int32 wait status, when the worker ends; then the server closes
// The server accepts only connections whose SO_PEERCRED is its own uid and the runner's pid.
// Workers get PR_SET_PDEATHSIG from the server, the server from the runner.
#pragma once

#include <sys/types.h>

#include <string>

namespace sharebench {

class ForkServer {
 public:
  static ForkServer& instance();

  // Forks the server if it is not running. Call early in main(). Throws on failure.
  void start();
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  const std::string& socket_path() const { return socket_path_; }

  // Asks for worker `rank`. Returns the connected fd (read the pid, then the status from it)
  // and stores the worker's pid in *worker_pid. Throws on failure.
  int request_worker(const std::string& cell_json, int rank, int arena_fd, pid_t* worker_pid);

  // Stops the server, killing any worker it still has; removes the socket and its directory.
  // Only in the process that started it: in a fork child (a worker that called exit(), which
  // runs static destructors) it forgets the server and touches nothing.
  void stop();
  ~ForkServer();

 private:
  ForkServer() = default;
  pid_t pid_ = -1;
  pid_t owner_ = -1;  // the process that started the server
  std::string dir_;
  std::string socket_path_;
};

}  // namespace sharebench
