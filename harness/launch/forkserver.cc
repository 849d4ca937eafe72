// ForkServer (server loop and client) and the ForkserverLauncher built on it.
#include "harness/launch/forkserver.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "harness/launch/launcher.h"
#include "harness/runner/leak_check.h"

namespace sharebench {

namespace {

constexpr std::uint32_t kRequestMagic = 0x53424653;  // "SBFS"
constexpr std::uint32_t kMaxCellJson = 1 << 20;
constexpr int kAnswerTimeoutS = 10;  // the server forks in milliseconds; 10 s means it is wedged

struct RequestHeader {
  std::uint32_t magic;
  std::int32_t rank;
  std::uint32_t json_bytes;
};

std::system_error errno_error(const std::string& what) {
  return std::system_error(errno, std::generic_category(), what);
}

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

// --- server side ----------------------------------------------------------------------------------

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
    if (fds[0].revents & POLLIN) {
      const int conn = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn < 0) continue;
      if (!peer_is_runner(conn, runner)) {
        ::close(conn);
        continue;
      }
      RequestHeader header{};
      std::string json;
      const int arena_fd = read_request(conn, &header, &json);
      if (arena_fd < 0) {
        const std::int32_t err = -EPROTO;
        write_full(conn, &err, sizeof err);
        ::close(conn);
        continue;
      }
      const pid_t server = ::getpid();
      const pid_t pid = ::fork();
      if (pid == 0) {
        ::close(listen_fd);
        ::close(sig_fd);
        for (auto& [p, c] : conn_of_worker) ::close(c);
        ::close(conn);
        ::sigprocmask(SIG_UNBLOCK, &mask, nullptr);
        die_with_parent(server);
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

}  // namespace

ForkServer& ForkServer::instance() {
  static ForkServer server;
  return server;
}

ForkServer::~ForkServer() { stop(); }

void ForkServer::start() {
  if (running()) return;
  owner_ = ::getpid();
  mark_runner_process();  // the server and every worker it forks know the runner
  char dir_template[] = "/tmp/sharebench-forkserver-XXXXXX";  // mkdtemp makes it 0700
  if (!::mkdtemp(dir_template)) throw errno_error("mkdtemp(/tmp/sharebench-forkserver-*)");
  dir_ = dir_template;
  socket_path_ = dir_ + "/socket";
  const int listen_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd < 0) throw errno_error("socket(AF_UNIX)");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_path_.c_str());
  if (::bind(listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::chmod(socket_path_.c_str(), 0600) != 0 || ::listen(listen_fd, 128) != 0) {
    auto err = errno_error(fmt::format("bind/listen({})", socket_path_));
    ::close(listen_fd);
    throw err;
  }
  const pid_t runner = ::getpid();
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw errno_error("fork (forkserver)");
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // not SIGKILL: the server cleans up its socket first
    if (::getppid() != runner) ::_exit(0);
    serve(listen_fd, runner, socket_path_, dir_);
  }
  ::close(listen_fd);
  pid_ = pid;
}

int ForkServer::request_worker(const std::string& cell_json, int rank, int arena_fd, pid_t* worker_pid) {
  if (!running()) start();
  const int conn = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (conn < 0) throw errno_error("socket(forkserver client)");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_path_.c_str());
  // The server answers within milliseconds; a bound on the wait keeps a wedged server from
  // hanging the runner.
  timeval answer_timeout{kAnswerTimeoutS, 0};
  ::setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &answer_timeout, sizeof answer_timeout);
  if (::connect(conn, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    auto err = errno_error(fmt::format("connect({})", socket_path_));
    ::close(conn);
    throw err;
  }
  RequestHeader header{kRequestMagic, rank, static_cast<std::uint32_t>(cell_json.size())};
  char control[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{&header, sizeof header};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &arena_fd, sizeof arena_fd);
  std::int32_t reply = 0;
  if (::sendmsg(conn, &msg, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof header) ||
      !write_full(conn, cell_json.data(), cell_json.size()) || !read_full(conn, &reply, sizeof reply)) {
    ::close(conn);
    throw std::runtime_error(fmt::format("forkserver (pid {}) did not answer a request", pid_));
  }
  if (reply <= 0) {
    ::close(conn);
    throw std::system_error(-reply, std::generic_category(), "forkserver could not fork a worker");
  }
  *worker_pid = reply;
  // From here the connection waits for the worker's exit status, which takes as long as the cell:
  // the group polls it.
  timeval no_timeout{0, 0};
  ::setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &no_timeout, sizeof no_timeout);
  return conn;
}

void ForkServer::stop() {
  if (owner_ != ::getpid()) {  // an inherited copy: the server and its socket are not ours
    pid_ = -1;
    socket_path_.clear();
    dir_.clear();
    return;
  }
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int status;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
  if (!socket_path_.empty()) ::unlink(socket_path_.c_str());
  if (!dir_.empty()) ::rmdir(dir_.c_str());
  socket_path_.clear();
  dir_.clear();
}

// --- the launcher -----------------------------------------------------------------------------

namespace {

class ForkserverGroup : public WorkerGroup {
 public:
  ~ForkserverGroup() override {
    kill_all();
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (running() > 0 && std::chrono::steady_clock::now() < until) wait_exits(std::chrono::milliseconds(50));
    for (Worker& w : workers_) {
      if (w.conn >= 0) ::close(w.conn);
    }
  }

  void add(int rank, pid_t pid, int conn) { workers_.push_back(Worker{rank, pid, conn}); }

  std::vector<pid_t> pids() const override {
    std::vector<pid_t> out;
    for (const Worker& w : workers_) out.push_back(w.pid);
    return out;
  }

  int running() const override {
    int n = 0;
    for (const Worker& w : workers_) n += w.conn >= 0 ? 1 : 0;
    return n;
  }

  std::vector<WorkerExit> wait_exits(std::chrono::milliseconds timeout) override {
    std::vector<pollfd> fds;
    std::vector<Worker*> owners;
    for (Worker& w : workers_) {
      if (w.conn >= 0) {
        fds.push_back({w.conn, POLLIN, 0});
        owners.push_back(&w);
      }
    }
    std::vector<WorkerExit> out;
    if (fds.empty()) return out;
    if (::poll(fds.data(), fds.size(), static_cast<int>(timeout.count())) <= 0) return out;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      Worker& w = *owners[i];
      std::int32_t status = 0;
      WorkerExit e;
      e.rank = w.rank;
      e.pid = w.pid;
      if (read_full(w.conn, &status, sizeof status)) {
        if (WIFEXITED(status)) {
          e.exited = true;
          e.exit_code = WEXITSTATUS(status);
        } else if (WIFSIGNALED(status)) {
          e.signal = WTERMSIG(status);
        }
      } else {
        e.exited = false;  // the server went away: the worker died with it (PDEATHSIG)
        e.signal = SIGKILL;
      }
      ::close(w.conn);
      w.conn = -1;
      out.push_back(e);
    }
    return out;
  }

  void send_all(int sig) override {
    for (const Worker& w : workers_) {
      if (w.conn >= 0) ::kill(w.pid, sig);
    }
  }

 private:
  struct Worker {
    int rank;
    pid_t pid;
    int conn;
  };
  std::vector<Worker> workers_;
};

class ForkserverLauncher : public Launcher {
 public:
  StartMethod method() const override { return StartMethod::kForkserver; }
  std::unique_ptr<WorkerGroup> launch(const CellConfig& cell, SharedArena& arena) override {
    auto group = std::make_unique<ForkserverGroup>();
    const std::string json = cell.to_json();
    for (int rank = 0; rank < cell.procs; ++rank) {
      pid_t pid = 0;
      const int conn = ForkServer::instance().request_worker(json, rank, arena.fd(), &pid);
      group->add(rank, pid, conn);
    }
    return group;
  }
};

}  // namespace

std::unique_ptr<Launcher> make_forkserver_launcher() { return std::make_unique<ForkserverLauncher>(); }

}  // namespace sharebench
