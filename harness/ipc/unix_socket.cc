// UnixSocket: path or abstract-namespace stream sockets, peer checks, SCM_RIGHTS fd passing,
// poll() deadlines.
#include "harness/ipc/unix_socket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "harness/util/clock.h"

namespace sharebench {

namespace {
[[noreturn]] void throw_system(const std::string& what) {
  throw IpcError(IpcError::Kind::kSystem, fmt::format("{}: {}", what, std::strerror(errno)));
}

bool is_path(const std::string& name) { return !name.empty() && name[0] == '/'; }

// "@name" for an abstract name, the path itself for a path: how errors show it.
std::string shown(const std::string& name) { return is_path(name) ? name : "@" + name; }

sockaddr_un socket_address(const std::string& name, socklen_t* length) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (name.empty() || name.size() > sizeof(addr.sun_path) - 2) {
    throw IpcError(IpcError::Kind::kSystem,
                   fmt::format("socket name '{}' is empty or longer than {} bytes", name, sizeof(addr.sun_path) - 2));
  }
  if (is_path(name)) {
    std::memcpy(addr.sun_path, name.data(), name.size());  // NUL-terminated by addr{}
    *length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + name.size() + 1);
  } else {
    addr.sun_path[0] = '\0';  // abstract: no file system entry
    std::memcpy(addr.sun_path + 1, name.data(), name.size());
    *length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  }
  return addr;
}

std::int64_t deadline_after(double timeout_s) {
  return monotonic_ns() + static_cast<std::int64_t>(timeout_s * 1e9);
}

// poll() until something is ready or the deadline passes, whatever signals arrive meanwhile (the
// harness's own: --chaos pauses a worker with one): an interrupted poll is retried with what is
// left, never taken for a timeout. Returns poll's count (0: the deadline passed).
int poll_until(pollfd* fds, std::size_t count, std::int64_t deadline_ns) {
  for (;;) {
    const std::int64_t left_ns = deadline_ns - monotonic_ns();
    const int ms = left_ns <= 0 ? 0 : static_cast<int>(std::min<std::int64_t>(left_ns / 1'000'000 + 1, 1000));
    const int n = ::poll(fds, count, ms);
    if (n > 0) return n;
    if (n < 0 && errno != EINTR) throw_system("poll");
    if (left_ns <= 0) return 0;  // the deadline had passed before this last look
  }
}

// Waits for `events` on fd until the deadline; throws kTimeout when it passes.
void wait_for(int fd, short events, std::int64_t deadline_ns, const char* what) {
  pollfd p{fd, events, 0};
  // Ready, or an error/hangup the next call reports.
  if (poll_until(&p, 1, deadline_ns) == 0) throw IpcError(IpcError::Kind::kTimeout, fmt::format("timed out waiting to {}", what));
}
}  // namespace

UnixSocket& UnixSocket::operator=(UnixSocket&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

UnixSocket::~UnixSocket() { close(); }

void UnixSocket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

UnixSocket UnixSocket::listen(const std::string& name, int backlog) {
  socklen_t length = 0;
  const sockaddr_un addr = socket_address(name, &length);
  UnixSocket s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!s.valid()) throw_system("socket");
  if (::bind(s.fd_, reinterpret_cast<const sockaddr*>(&addr), length) != 0) throw_system(fmt::format("bind '{}'", shown(name)));
  if (::listen(s.fd_, backlog) != 0) throw_system("listen");
  return s;
}

UnixSocket UnixSocket::connect(const std::string& name, double timeout_s) {
  socklen_t length = 0;
  const sockaddr_un addr = socket_address(name, &length);
  const std::int64_t deadline = deadline_after(timeout_s);
  for (;;) {
    UnixSocket s(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!s.valid()) throw_system("socket");
    if (::connect(s.fd_, reinterpret_cast<const sockaddr*>(&addr), length) == 0) return s;
    if (errno != ECONNREFUSED && errno != ENOENT && errno != EAGAIN) throw_system(fmt::format("connect '{}'", shown(name)));
    if (monotonic_ns() >= deadline) {
      throw IpcError(IpcError::Kind::kTimeout, fmt::format("no one listened on '{}' within {} s", shown(name), timeout_s));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

std::pair<UnixSocket, UnixSocket> UnixSocket::pair() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) throw_system("socketpair");
  return {UnixSocket(fds[0]), UnixSocket(fds[1])};
}

UnixSocket UnixSocket::accept(double timeout_s) {
  const std::int64_t deadline = deadline_after(timeout_s);
  for (;;) {
    wait_for(fd_, POLLIN, deadline, "accept a connection");
    UnixSocket s(::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC));
    if (!s.valid()) {
      if (errno == EINTR || errno == ECONNABORTED || errno == EAGAIN) continue;
      throw_system("accept");
    }
    // Only a process of this user is a peer: anyone else is refused (and said so) before a byte
    // is read, and the wait goes on for the real peer.
    ucred peer{};
    socklen_t size = sizeof peer;
    if (::getsockopt(s.fd_, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0) throw_system("getsockopt(SO_PEERCRED)");
    if (peer.uid == ::geteuid()) return s;
    std::fprintf(stderr, "sharebench: refused a connection from pid %d (uid %u): not this run's user\n",
                 static_cast<int>(peer.pid), static_cast<unsigned>(peer.uid));
  }
}

bool UnixSocket::readable(double timeout_s) const {
  pollfd p{fd_, POLLIN, 0};
  return poll_until(&p, 1, deadline_after(timeout_s)) > 0;
}

void UnixSocket::send(const void* data, std::size_t bytes, double timeout_s, int fd_to_pass) {
  const std::int64_t deadline = deadline_after(timeout_s);
  const char* p = static_cast<const char*>(data);
  bool fd_pending = fd_to_pass >= 0;
  while (bytes > 0) {
    iovec iov{const_cast<char*>(p), bytes};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    if (fd_pending) {
      msg.msg_control = control;
      msg.msg_controllen = sizeof(control);
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &fd_to_pass, sizeof(int));
    }
    const ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      p += n;
      bytes -= static_cast<std::size_t>(n);
      fd_pending = false;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      wait_for(fd_, POLLOUT, deadline, "send");
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EPIPE || errno == ECONNRESET)) {
      throw IpcError(IpcError::Kind::kPeerClosed, "the peer closed the connection");
    }
    throw_system("sendmsg");
  }
}

void UnixSocket::receive(void* data, std::size_t bytes, double timeout_s, int* received_fd) {
  const std::int64_t deadline = deadline_after(timeout_s);
  if (received_fd) *received_fd = -1;
  char* p = static_cast<char*>(data);
  const std::size_t wanted = bytes;
  while (bytes > 0) {
    wait_for(fd_, POLLIN, deadline, "receive");
    iovec iov{p, bytes};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    const ssize_t n = ::recvmsg(fd_, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
    if (n < 0 && errno != ECONNRESET) throw_system("recvmsg");
    if (n <= 0) {
      throw IpcError(IpcError::Kind::kPeerClosed,
                     bytes == wanted ? "the peer closed the connection"
                                     : fmt::format("the peer closed the connection mid-message ({} of {} bytes)",
                                                   wanted - bytes, wanted));
    }
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
        if (received_fd && *received_fd < 0) {
          *received_fd = fd;
        } else {
          ::close(fd);  // not asked for: never leak it
        }
      }
    }
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
}

namespace {
struct RankHello {
  std::int32_t rank = 0;
};
}  // namespace

std::vector<UnixSocket> accept_ranked_peers(const std::string& name, int peers, double accept_timeout_s,
                                            double io_timeout_s) {
  UnixSocket listener = UnixSocket::listen(name, peers);
  std::vector<UnixSocket> by_rank(static_cast<std::size_t>(peers));
  for (int i = 0; i < peers; ++i) {
    UnixSocket s = listener.accept(accept_timeout_s);
    RankHello hello;
    s.receive(&hello, sizeof(hello), io_timeout_s);
    if (hello.rank < 1 || hello.rank > peers || by_rank[static_cast<std::size_t>(hello.rank - 1)].valid()) {
      throw std::runtime_error(fmt::format("a peer said it was rank {} (want each of 1..{} once)", hello.rank, peers));
    }
    by_rank[static_cast<std::size_t>(hello.rank - 1)] = std::move(s);
  }
  return by_rank;
}

UnixSocket connect_as_rank(const std::string& name, int rank, double connect_timeout_s, double io_timeout_s) {
  UnixSocket s = UnixSocket::connect(name, connect_timeout_s);
  RankHello hello{rank};
  s.send(&hello, sizeof(hello), io_timeout_s);
  return s;
}

std::optional<std::size_t> first_readable(const std::vector<UnixSocket>& sockets, double timeout_s) {
  std::vector<pollfd> fds;
  for (const auto& s : sockets) fds.push_back(pollfd{s.fd(), POLLIN, 0});
  const int ready = poll_until(fds.data(), fds.size(), deadline_after(timeout_s));
  for (std::size_t i = 0; ready > 0 && i < fds.size(); ++i) {
    if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) return i;
  }
  return std::nullopt;
}

}  // namespace sharebench
