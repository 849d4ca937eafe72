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
#include <optional>
#include <string>
#include <vector>
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

// One listener and its ranked peers (a producer and its consumers, ranks 1..peers): each peer
// connects and says its rank first. Listens on `name`, accepts `peers` connections (each within
// accept_timeout_s) and returns them in rank order, slot r-1 for rank r; throws on a bad rank.
std::vector<UnixSocket> accept_ranked_peers(const std::string& name, int peers, double accept_timeout_s,
                                            double io_timeout_s);
// The peer's side: connects to `name` and says its rank.
UnixSocket connect_as_rank(const std::string& name, int rank, double connect_timeout_s, double io_timeout_s);

// The index of a socket that has something to read (or was closed by its peer), waiting up to
// timeout_s; nullopt when none did.
std::optional<std::size_t> first_readable(const std::vector<UnixSocket>& sockets, double timeout_s);

}  // namespace sharebench
