// Test-only scenarios: see test_scenarios.h.
#include "tests/test_scenarios.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>
#include <exception>
#include <stdexcept>
#include <chrono>
#include <thread>

#include "harness/proc/leak_check.h"
#include "harness/scenario/scenario.h"

namespace sharebench::testing {

int leaked_fd = -1;

namespace {
class ProbeScenario : public Scenario {
 public:
  explicit ProbeScenario(const CellConfig& c) : cell_(c) {
    // A worker that never finishes launching (its scenario object is made before it attaches):
    // one spins (uses CPU, which counts as launch progress), one blocks (uses none).
    if (std::getenv("SHAREBENCH_WORKER_RANK") != nullptr) {
      if (c.variant == "launch-spins") {
        for (volatile std::uint64_t i = 0;; i = i + 1) {
        }
      }
      while (c.variant == "launch-blocks") std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }
  // hangs-on-the-way-out: a worker's scenario object never finishes being destroyed (a destructor
  // joining a thread that never ends), after its work() returned.
  ~ProbeScenario() override {
    while (block_in_destructor_) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  void setup(SetupContext& ctx) override {
    ctx.arena().allocate(kProbeRegion, sizeof(std::int64_t) * ProcessMutex::kMaxRanks);
    // A setup that blocks for good (a peer that never comes): the runner must go on without it.
    while (cell_.variant == "setup-blocks") std::this_thread::sleep_for(std::chrono::seconds(1));
    // Planted leaks for the leak check: a descriptor and a /dev/shm entry nobody releases.
    if (cell_.variant == "leak-fd") leaked_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (cell_.variant == "leak-shm") {
      const int fd = ::shm_open(("/" + run_shm_prefix() + "leak").c_str(), O_CREAT | O_RDWR, 0600);
      if (fd >= 0) ::close(fd);
    }
  }
  void work(WorkerContext& ctx) override {
    auto* values = static_cast<std::int64_t*>(ctx.arena().get(kProbeRegion));
    ctx.wait_for_start();
    const std::string& v = cell_.variant;
    if (v == "exit-code") ::_exit(ctx.rank() + 3);
    if (v == "terminates" && ctx.rank() == 1) {
      ctx.beat(3);
      std::set_terminate(nullptr);  // the default handler: prints the reason to stderr, then abort()
      // An exception that leaves a noexcept function: std::terminate, as a throwing destructor would.
      void (*volatile thrower)() = [] { throw std::runtime_error("planted: a worker that dies by std::terminate"); };
      [thrower]() noexcept { thrower(); }();
    }
    if (v == "grows" || v == "steady") {  // a second of work, sampled about ten times
      for (int i = 1; i <= 40; ++i) {
        if (v == "grows" && ctx.rank() == 1) {  // 4 MiB more private memory every step, never freed: a leak
          static std::vector<char*> leaked;  // reachable, so the compiler keeps the allocations
          leaked.push_back(new char[4 << 20]);
          std::memset(leaked.back(), i, 4 << 20);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
        ctx.beat(i);
      }
    }
    // 192 MiB in one burst, far too quick for the watchdog's samples on an idle machine; on a loaded
    // one, where faulting it in takes long enough for samples, still three times the 64 MiB bound
    // past a sample taken a quarter of the way through (96 MiB once grew 64.1 from there: CI, 28 Nov).
    if (v == "grows-fast" && ctx.rank() == 1) {
      static std::vector<char*> kept;
      for (int i = 0; i < 48; ++i) {
        kept.push_back(new char[4 << 20]);
        std::memset(kept.back(), i + 1, 4 << 20);
      }
    }
    if (v == "leaves-helper" && ctx.rank() == 0) {  // a daemonised grandchild that outlives the worker
      if (::fork() == 0) {
        ::setsid();
        if (::fork() == 0) {
          std::this_thread::sleep_for(std::chrono::seconds(60));
          ::_exit(0);
        }
        ::_exit(0);
      }
      ::wait(nullptr);
    }
    if (v == "worker-shm" && ctx.rank() == 1) {  // a segment named with the run's prefix, left behind
      const int fd = ::shm_open(("/" + run_shm_prefix() + "from-a-worker").c_str(), O_CREAT | O_RDWR, 0600);
      if (fd >= 0) ::close(fd);
    }
    if (v == "calls-exit" && ctx.rank() == 1) {
      ctx.beat(2);
      std::exit(0);  // a user's worker that ends the process itself: static destructors must not run
    }
    if (v == "signal" && ctx.rank() == 1) ::raise(SIGKILL);
    if (v == "hang" && ctx.rank() == 0) {
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    for (int i = 1; i <= 5; ++i) ctx.beat(i);
    values[ctx.rank()] = (ctx.rank() + 1) * 10;
    block_in_destructor_ = v == "hangs-on-the-way-out" && ctx.rank() == 0;
  }
  void check(CheckContext& ctx) override {
    while (cell_.variant == "check-blocks") std::this_thread::sleep_for(std::chrono::seconds(1));
    auto* values = static_cast<std::int64_t*>(ctx.arena().get(kProbeRegion));
    bool all = true;
    for (int r = 0; r < ctx.cell().procs; ++r) all &= values[r] == (r + 1) * 10;
    ctx.check("values", all ? Verdict::kPass : Verdict::kFail, std::nullopt, "every rank wrote its value");
  }

 private:
  CellConfig cell_;
  bool block_in_destructor_ = false;
};
}  // namespace

SHAREBENCH_SCENARIO(ProbeScenario, "probe")
    ->Describe("test-only launcher and watchdog probe")
    ->Variant("ok", "all good")
    ->Variant("exit-code", "worker r exits r + 3")
    ->Variant("calls-exit", "rank 1 calls exit(0) in the middle of work()")
    ->Variant("hangs-on-the-way-out", "rank 0 finishes its work, then its scenario's destructor never returns")
    ->Variant("terminates", "rank 1 dies by std::terminate at step 3")
    ->Variant("grows", "rank 1 keeps 4 MiB more private memory every step (160 MiB in all)")
    ->Variant("steady", "the clean twin of grows: the same second of work, no allocation")
    ->Variant("grows-fast", "rank 1 keeps 192 MiB more private memory in one burst, in milliseconds")
    ->Variant("leaves-helper", "rank 0 starts a daemon (double fork, setsid) that outlives it")
    ->Variant("worker-shm", "rank 1 creates a /dev/shm segment with the run's prefix and leaves it")
    ->Variant("signal", "rank 1 dies of SIGKILL")
    ->Variant("hang", "rank 0 stops making progress")
    ->Variant("launch-spins", "every worker process spins for good before it attaches")
    ->Variant("launch-blocks", "every worker process blocks for good before it attaches")
    ->Variant("leak-fd", "the runner side opens a descriptor and keeps it")
    ->Variant("leak-shm", "the runner side creates a /dev/shm entry and never unlinks it")
    ->Variant("setup-blocks", "setup() never returns")
    ->Variant("check-blocks", "check() never returns")
    ->Variant("detector-throws", "a detector registered by this test binary throws on this variant");

}  // namespace sharebench::testing
