// ForkServer (its client side; the server loop is forkserver_server.cc) and the ForkserverLauncher
// built on it.
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

#include "harness/launch/forkserver_protocol.h"
#include "harness/launch/launcher.h"
#include "harness/proc/leak_check.h"
#include "harness/util/parent_death.h"

namespace sharebench {

namespace {

using namespace forkserver_protocol;

constexpr int kAnswerTimeoutS = 10;  // the server forks in milliseconds; 10 s means it is wedged

std::system_error errno_error(const std::string& what) {
  return std::system_error(errno, std::generic_category(), what);
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
  // mkdtemp makes it 0700. The runner's pid in the name: when the whole group dies by SIGKILL, the
  // next run's dead-run sweep knows whose it was and removes it (dead_run_sweep.h).
  std::string dir_template = fmt::format("/tmp/sharebench-{}-forkserver-XXXXXX", owner_);
  if (!::mkdtemp(dir_template.data())) throw errno_error(fmt::format("mkdtemp({})", dir_template));
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
    die_with_parent(runner, SIGTERM, 0);  // not SIGKILL: the server cleans up its socket first
    serve(listen_fd, runner, socket_path_, dir_);
  }
  ::close(listen_fd);
  pid_ = pid;
  set_forkserver_pid(pid);
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
    set_forkserver_pid(-1);
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
    set_forkserver_pid(-1);
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
