// The forkserver's server loop (forkserver_protocol.h): a process forked from the runner before
// LibTorch's threads exist that forks each worker on request, so forkserver workers start from a
// clean, single-threaded image and leave their exit status on the request's connection.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "harness/arena/shared_arena.h"
#include "harness/config/cell_config.h"
#include "harness/launch/forkserver_protocol.h"
#include "harness/launch/launcher.h"
#include "harness/proc/leak_check.h"

namespace sharebench::forkserver_protocol {

bool read_full(int fd, void* buf, std::size_t n) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

bool write_full(int fd, const void* buf, std::size_t n) {
  const auto* p = static_cast<const char*>(buf);
  while (n > 0) {
    const ssize_t r = ::send(fd, p, n, MSG_NOSIGNAL);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

namespace {

// Reads one request; returns the received arena fd or -1.
int read_request(int conn, RequestHeader* header, std::string* json) {
  char control[CMSG_SPACE(sizeof(int))];
  iovec iov{header, sizeof *header};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t r;
  do {
    r = ::recvmsg(conn, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  } while (r < 0 && errno == EINTR);
  if (r != static_cast<ssize_t>(sizeof *header)) return -1;
  int fd = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
  }
  if (header->magic != kRequestMagic || header->json_bytes > kMaxCellJson || fd < 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  json->resize(header->json_bytes);
  if (!read_full(conn, json->data(), json->size())) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool peer_is_runner(int conn, pid_t runner) {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return false;
  return cred.uid == ::getuid() && cred.pid == runner;
}

// Takes one request from the runner and forks its worker; the connection then waits for its exit.
void accept_and_fork(int listen_fd, int sig_fd, const sigset_t& mask, pid_t runner,
                     std::map<pid_t, int>& conn_of_worker) {
  const int conn = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (conn < 0) return;
  if (!peer_is_runner(conn, runner)) {
    ::close(conn);
    return;
  }
  RequestHeader header{};
  std::string json;
  const int arena_fd = read_request(conn, &header, &json);
  if (arena_fd < 0) {
    const std::int32_t err = -EPROTO;
    write_full(conn, &err, sizeof err);
    ::close(conn);
    return;
  }
  const pid_t server = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(listen_fd);
    ::close(sig_fd);
    for (auto& [p, c] : conn_of_worker) ::close(c);
    ::close(conn);
    ::sigprocmask(SIG_UNBLOCK, &mask, nullptr);
    die_as_worker_with_parent(server);
    int code = kWorkerExitSetupFailed;
    try {
      const CellConfig cell = CellConfig::from_json(json);
      SharedArena arena = SharedArena::attach(arena_fd);
      ::close(arena_fd);
      code = run_worker(cell, arena, header.rank);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "sharebench forkserver worker: %s\n", e.what());
    }
    std::fflush(nullptr);
    ::_exit(code);
  }
  ::close(arena_fd);
  const std::int32_t reply = pid > 0 ? pid : -errno;
  write_full(conn, &reply, sizeof reply);
  if (pid > 0) {
    conn_of_worker[pid] = conn;
  } else {
    ::close(conn);
  }
}

}  // namespace

[[noreturn]] void serve(int listen_fd, pid_t runner, const std::string& socket_path, const std::string& dir) {
  become_subreaper();  // a process a worker started that outlives it comes back here, to be found
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);  // Ctrl-C reaches the whole process group; the runner decides
  ::sigprocmask(SIG_BLOCK, &mask, nullptr);
  const int sig_fd = ::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  std::map<pid_t, int> conn_of_worker;

  auto reap = [&] {
    int status = 0;
    pid_t pid;
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
      auto it = conn_of_worker.find(pid);
      if (it == conn_of_worker.end()) continue;
      const std::int32_t st = status;
      write_full(it->second, &st, sizeof st);
      ::close(it->second);
      conn_of_worker.erase(it);
    }
  };

  for (;;) {
    pollfd fds[2] = {{listen_fd, POLLIN, 0}, {sig_fd, POLLIN, 0}};
    if (::poll(fds, 2, 1000) < 0 && errno != EINTR) ::_exit(3);
    if (::getppid() != runner) break;
    if (fds[1].revents & POLLIN) {
      signalfd_siginfo info{};
      while (::read(sig_fd, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
        if (info.ssi_signo == SIGTERM) goto shutdown;
      }
      reap();
    }
    if (fds[0].revents & POLLIN) accept_and_fork(listen_fd, sig_fd, mask, runner, conn_of_worker);
  }
shutdown:
  for (auto& [pid, conn] : conn_of_worker) ::kill(pid, SIGKILL);
  while (::waitpid(-1, nullptr, 0) > 0) {
  }
  // Also reached when the runner died (its death signal to us is SIGTERM): leave nothing behind.
  ::unlink(socket_path.c_str());
  ::rmdir(dir.c_str());
  ::_exit(0);
}


}  // namespace sharebench::forkserver_protocol
