// UnixSocket: a Unix stream socket with deadlines and fd passing, the one channel under every
// message-passing transport here (the ipc scenario, the pipe averaging manager, the IPC
// benchmarks).
//
// A name that starts with '/' is a path: the socket file lives there, and a path in a cell's
// private 0700 directory (SetupContext::private_path) is reachable by this user alone: that is
// what every rendezvous of a run uses. Any other name lives in Linux's abstract namespace, which
// any local user can reach (and squat) if they guess it: for tests and benchmarks only. Either
// way accept() refuses a peer of another uid (SO_PEERCRED) before reading a byte from it, and any
// start method (fork, spawn, forkserver, thread) reaches a listener by name alone. A file
// descriptor rides along with a message as SCM_RIGHTS
// ancillary data, which is what torch.multiprocessing's `file_descriptor` sharing strategy does.
//
// Every blocking call takes a timeout and fails with a named IpcError rather than waiting forever:
// a peer that exited shows up as kPeerClosed (EOF or EPIPE), a peer that stalls as kTimeout.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace sharebench {

class IpcError : public std::runtime_error {
 public:
  enum class Kind { kPeerClosed, kTimeout, kSystem };
  IpcError(Kind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

class UnixSocket {
 public:
  // Listens on `name` (a path, or an abstract name; at most 106 bytes). Throws IpcError (kSystem)
  // when the name is taken.
  static UnixSocket listen(const std::string& name, int backlog);
  // Connects to `name`, retrying while no one listens there yet, for up to timeout_s.
  static UnixSocket connect(const std::string& name, double timeout_s);
  // A connected pair (socketpair), for a parent and the child it forks, or two threads.
  static std::pair<UnixSocket, UnixSocket> pair();

  UnixSocket() = default;
  explicit UnixSocket(int fd) : fd_(fd) {}
  UnixSocket(UnixSocket&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UnixSocket& operator=(UnixSocket&& other) noexcept;
  UnixSocket(const UnixSocket&) = delete;
  UnixSocket& operator=(const UnixSocket&) = delete;
  ~UnixSocket();

  // The next connection from a process of this user; one of another uid is closed unread and
  // logged on stderr. Throws kTimeout when none came within timeout_s.
  UnixSocket accept(double timeout_s);
  // Sends all `bytes`; when fd_to_pass >= 0 it travels with the first byte.
  void send(const void* data, std::size_t bytes, double timeout_s, int fd_to_pass = -1);
  // Receives exactly `bytes`. If `received_fd` is given, an fd that came with the message is
  // stored there (else -1); the caller owns it. Throws kPeerClosed on EOF before the first byte.
  void receive(void* data, std::size_t bytes, double timeout_s, int* received_fd = nullptr);
  // True when a read would not block (data or EOF waiting), within timeout_s.
  bool readable(double timeout_s) const;

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void close();

 private:
  int fd_ = -1;
};

}  // namespace sharebench
