// AveragingManager and AveragingClient: the manager's serve loop and the fork that starts it.
#include "harness/ipc/averaging_manager.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "harness/util/clock.h"
#include "harness/util/parent_death.h"

namespace sharebench {

namespace {
constexpr int kMaxReport = 480;

// The manager's whole life, in the forked child. Returns its last words.
std::string serve(UnixSocket& listener, int parties, std::int64_t floats, double timeout_s) {
  std::vector<UnixSocket> clients(static_cast<std::size_t>(parties));
  for (int i = 0; i < parties; ++i) {
    UnixSocket s = listener.accept(timeout_s);
    std::int32_t rank = -1;
    s.receive(&rank, sizeof(rank), timeout_s);
    if (rank < 0 || rank >= parties || clients[static_cast<std::size_t>(rank)].valid()) {
      return fmt::format("error: a client announced rank {}, which is out of range or taken", rank);
    }
    clients[static_cast<std::size_t>(rank)] = std::move(s);
  }
  listener.close();
  const auto n = static_cast<std::size_t>(floats);
  std::vector<float> slots(n * static_cast<std::size_t>(parties)), mean(n);
  std::int64_t rounds = 0;
  for (;;) {
    for (int r = 0; r < parties; ++r) {
      try {
        clients[static_cast<std::size_t>(r)].receive(slots.data() + r * n, n * sizeof(float), timeout_s);
      } catch (const IpcError& e) {
        if (e.kind() == IpcError::Kind::kPeerClosed && r == 0) return fmt::format("served {} rounds", rounds);
        return fmt::format("error: rank {} in round {}: {}", r, rounds, e.what());
      }
    }
    for (std::size_t k = 0; k < n; ++k) {
      float sum = 0;
      for (int r = 0; r < parties; ++r) sum += slots[r * n + k];
      mean[k] = sum / static_cast<float>(parties);
    }
    for (auto& c : clients) c.send(mean.data(), n * sizeof(float), timeout_s);
    ++rounds;
  }
}
}  // namespace

AveragingManager AveragingManager::start(const std::string& socket_name, int parties, std::int64_t floats,
                                         double timeout_s) {
  UnixSocket listener = UnixSocket::listen(socket_name, parties);
  auto [mine, theirs] = UnixSocket::pair();
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork of the averaging manager");
  if (pid == 0) {
    die_with_parent(parent);
    mine.close();
    std::string words;
    try {
      words = serve(listener, parties, floats, timeout_s);
    } catch (const std::exception& e) {
      words = fmt::format("error: {}", e.what());
    }
    words.resize(std::min<std::size_t>(words.size(), kMaxReport));
    try {
      theirs.send(words.data(), words.size(), 1.0);
    } catch (...) {
    }
    ::_exit(words.rfind("error", 0) == 0 ? 1 : 0);
  }
  AveragingManager m;
  m.pid_ = pid;
  m.report_ = std::move(mine);
  return m;
}

AveragingManager::AveragingManager(AveragingManager&& o) noexcept
    : pid_(std::exchange(o.pid_, -1)), clean_(o.clean_), report_(std::move(o.report_)) {}

AveragingManager& AveragingManager::operator=(AveragingManager&& o) noexcept {
  if (this != &o) {
    if (pid_ > 0) finish(0);
    pid_ = std::exchange(o.pid_, -1);
    clean_ = o.clean_;
    report_ = std::move(o.report_);
  }
  return *this;
}

AveragingManager::~AveragingManager() {
  if (pid_ > 0) finish(0);
}

std::string AveragingManager::finish(double timeout_s) {
  if (pid_ <= 0) return "not running";
  const std::int64_t deadline = monotonic_ns() + static_cast<std::int64_t>(timeout_s * 1e9);
  int status = 0;
  pid_t done = 0;
  while ((done = ::waitpid(pid_, &status, WNOHANG)) == 0 && monotonic_ns() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::string words;
  if (done == 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
    words = "killed: it was still running when the cell ended";
  } else {
    char buffer[kMaxReport + 1] = {};
    const ssize_t n = report_.readable(0) ? ::read(report_.fd(), buffer, kMaxReport) : 0;
    words = n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "ended without a word";
    clean_ = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  pid_ = -1;
  report_.close();
  return words;
}

AveragingClient::AveragingClient(const std::string& socket_name, int rank, double timeout_s)
    : socket_(UnixSocket::connect(socket_name, timeout_s)), timeout_s_(timeout_s) {
  const std::int32_t r = rank;
  socket_.send(&r, sizeof(r), timeout_s_);
}

void AveragingClient::mean(float* data, std::int64_t n) {
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
  socket_.send(data, bytes, timeout_s_);
  socket_.receive(data, bytes, timeout_s_);
}

}  // namespace sharebench
