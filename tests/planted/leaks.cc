// Planted: what a worker leaves behind. Each bug does one thing a worker must not, and the
// harness's `no-leaks` check must name it with the rank that did it:
//   fd      opens a descriptor in work() and never closes it
//   shm     creates a named /dev/shm segment (with the run's prefix) and never unlinks it
//   helper  forks a helper process that outlives the worker
// Twin `tidy`: the same three things, each undone before work() returns.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <string>

#include <sharebench/sharebench.h>

namespace {

class Leaks : public sharebench::Scenario {
 public:
  explicit Leaks(const sharebench::CellConfig& c) : cell_(c) {}
  void setup(sharebench::SetupContext&) override {}
  void work(sharebench::WorkerContext& ctx) override {
    const std::string& v = cell_.variant;
    ctx.wait_for_start();
    const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const std::string segment = fmt::format("/{}planted-{}", sharebench::run_shm_prefix(), ctx.rank());
    const int shm = ::shm_open(segment.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0600);
    const pid_t helper = ::fork();
    if (helper == 0) {
      ::sleep(60);
      ::_exit(0);
    }
    for (std::int64_t step = 1; step <= cell_.workload.steps; ++step) ctx.beat(step);
    if (v != "fd") ::close(fd);
    ::close(shm);
    if (v != "shm") ::shm_unlink(segment.c_str());
    if (v != "helper" && helper > 0) {
      ::kill(helper, SIGKILL);
      ::waitpid(helper, nullptr, 0);
    }
  }
  void check(sharebench::CheckContext&) override {}

 private:
  sharebench::CellConfig cell_;
};

}  // namespace

// What the harness must say of each planted bug, in every repetition under every start method
// (tests/planted_pair_test.py reads these lines: `expect SCENARIO/VARIANT: CHECK says "WORDS"...`).
// expect leaks/fd: no-leaks says "descriptor" "/dev/null" "rank"
// expect leaks/shm: no-leaks says "/dev/shm" "planted-"
// expect leaks/helper: no-leaks says "started by rank"
SHAREBENCH_SCENARIO(Leaks, "leaks")
    ->Describe("a worker opens a descriptor, a segment and a helper process")
    ->Variant("tidy", "closes, unlinks and reaps all three")
    ->NoRandomFaults("a worker a fault kills leaves its helper process running, which no-leaks reports by design")
    // Under --start thread the ranks share their host's descriptors: the host counts what the
    // threads left open once all returned, without the rank.
    ->KnownBug("fd", "leaves the descriptor open", sharebench::Expectation{{"no-leaks"}}, 1)
    ->KnownBug("shm", "leaves the segment in /dev/shm", sharebench::Expectation{{"no-leaks"}}, 1)
    ->KnownBug("helper", "leaves the helper running", sharebench::Expectation{{"no-leaks"}}, 1);
