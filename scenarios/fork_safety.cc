// Scenario `fork`: a library in the runner keeps a process-local lock (think of a logger, an
// allocator arena, OpenMP's pool) that one of the runner's own threads takes now and then, and the
// workers call into that library on every step. PyTorch's multiprocessing notes: "If there's any thread that holds a lock
// […] and fork is called, it's very likely that the subprocess will be in a corrupted state and
// will deadlock."
//   threads-holding-lock  (known bug, under fork only) the runner's logger thread holds the
//                         library's lock while the workers are forked: each child inherits the
//                         lock locked, by a thread that does not exist in the child, and blocks on
//                         its first call into the library forever. Under spawn and forkserver the
//                         child starts from a clean image (exec, or a server forked before any
//                         thread existed): clean. Must be reported as a hang (`liveness`) with the
//                         stuck stacks, and by `fork-safe`, which names the rank, the step and the
//                         lock.
//   atfork-guarded        the same library and thread, but the library registers pthread_atfork
//                         handlers (take the lock before fork, release it in both parent and
//                         child) as glibc's malloc does: clean under every start method.
// The interleaving is forced, not hoped for: in the known-bug variant the logger thread takes the
// lock before setup() returns and lets go only when the runner checks the cell, so every fork
// happens while it is held. The rendezvous is between the runner's threads; it adds nothing to
// what the workers do.
#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "harness/scenario/scenario.h"

namespace sharebench {

namespace {
constexpr const char* kRegion = "fork.state";

// The library: one process-local lock guarding a log buffer. Every process has its own copy; a fork
// child gets the parent's copy in whatever state it was at fork().
class LoggingLibrary {
 public:
  static LoggingLibrary& instance() {
    static LoggingLibrary library;
    return library;
  }
  void write(std::int64_t value) {
    pthread_mutex_lock(&lock_);
    buffer_[position_++ % kBufferSize] = value;
    pthread_mutex_unlock(&lock_);
  }
  void lock() { pthread_mutex_lock(&lock_); }
  void unlock() { pthread_mutex_unlock(&lock_); }
  // The fix: take the lock around fork() so no other thread holds it at the moment of the copy.
  // Handlers stay registered for the process's life, as atfork handlers do; they act only while
  // the guarded variant runs (the runner goes on to other cells, the known bug's among them).
  void guard_fork(bool on) {
    static const int registered = pthread_atfork(
        [] {
          if (instance().guarded_) instance().lock();
        },
        [] {
          if (instance().guarded_) instance().unlock();
        },
        [] {
          if (instance().guarded_) instance().unlock();
        });
    (void)registered;
    guarded_ = on;
  }

 private:
  static constexpr std::size_t kBufferSize = 256;
  pthread_mutex_t lock_ = PTHREAD_MUTEX_INITIALIZER;
  std::int64_t buffer_[kBufferSize] = {};
  std::size_t position_ = 0;
  std::atomic<bool> guarded_{false};  // changed only between forks, by the runner's main thread
};

struct ForkState {
  // rank → 1 + the step at which it entered the library and has not come back; 0 when outside.
  std::atomic<std::int64_t> inside_library[ProcessMutex::kMaxRanks] = {};
  std::atomic<std::int32_t> runner_thread_held_at_launch{0};
};

class ForkSafetyScenario : public Scenario {
 public:
  explicit ForkSafetyScenario(const CellConfig& c) : cell_(c) {}
  ~ForkSafetyScenario() override { stop_logger(); }

  void setup(SetupContext& ctx) override {
    auto* state = ctx.arena().create<ForkState>(kRegion);
    LoggingLibrary& library = LoggingLibrary::instance();
    const bool guarded = cell_.variant == "atfork-guarded";
    if (guarded) library.guard_fork(true);
    std::promise<void> holding;
    auto held = holding.get_future();
    logger_ = std::thread([this, guarded, &library, holding = std::move(holding)]() mutable {
      std::unique_lock<std::mutex> wait(stop_mutex_);
      if (!guarded) {
        // Forced interleaving: hold the library's lock across the workers' launch.
        library.lock();
        holding.set_value();
        stop_cv_.wait(wait, [&] { return stop_; });
        library.unlock();
        return;
      }
      holding.set_value();
      while (!stop_) {  // a busy logger: short critical sections, back to back
        library.lock();
        std::this_thread::sleep_for(std::chrono::microseconds(500));
        library.unlock();
        stop_cv_.wait_for(wait, std::chrono::microseconds(50), [&] { return stop_; });
      }
    });
    held.wait();
    state->runner_thread_held_at_launch.store(guarded ? 0 : 1);
  }

  void work(WorkerContext& ctx) override {
    auto* state = ctx.arena().lookup<ForkState>(kRegion);
    auto& inside = state->inside_library[ctx.rank()];
    LoggingLibrary& library = LoggingLibrary::instance();
    ctx.wait_for_start();
    for (std::int64_t step = 0; step < cell_.workload.steps; ++step) {
      inside.store(step + 1, std::memory_order_release);
      library.write(step);
      inside.store(0, std::memory_order_release);
      ctx.beat(step + 1);
    }
  }

  void before_teardown(SharedArena& arena) override {
    auto* state = arena.lookup<ForkState>(kRegion);
    for (int r = 0; r < cell_.procs; ++r) {
      const std::int64_t step = state->inside_library[r].load(std::memory_order_acquire);
      if (step > 0) stuck_.push_back({r, step - 1});
    }
    stop_logger();
  }

  void check(CheckContext& ctx) override {
    stop_logger();
    auto* state = ctx.arena().lookup<ForkState>(kRegion);
    if (stuck_.empty()) {
      if (ctx.all_completed()) {
        ctx.check(checks::kForkSafe, Verdict::kPass, 0.0, "every worker took the library's lock on every step");
      } else {
        ctx.check(checks::kForkSafe, Verdict::kUnknown, std::nullopt,
                  "a worker did not complete, but none was found blocked in the library");
      }
      return;
    }
    std::vector<std::string> who;
    for (const auto& s : stuck_) who.push_back(fmt::format("rank {} at step {}", s.rank, s.step));
    const bool held = state->runner_thread_held_at_launch.load() != 0;
    ctx.check(checks::kForkSafe, Verdict::kFail, static_cast<double>(stuck_.size()),
              fmt::format("{} blocked taking the library's process-local lock{}: the child inherited it locked, "
                          "and its owner, a thread of the parent, does not exist in the child (fork with "
                          "threads holding locks; use spawn or forkserver, or pthread_atfork handlers)",
                          fmt::join(who, ", "), held ? ", which a runner thread held at fork()" : ""));
  }

 private:
  struct Stuck {
    int rank;
    std::int64_t step;
  };

  void stop_logger() {
    {
      std::lock_guard<std::mutex> g(stop_mutex_);
      stop_ = true;
    }
    stop_cv_.notify_all();
    if (logger_.joinable()) logger_.join();
    if (cell_.variant == "atfork-guarded") LoggingLibrary::instance().guard_fork(false);
  }

  CellConfig cell_;
  std::thread logger_;
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::vector<Stuck> stuck_;
};
}  // namespace

SHAREBENCH_SCENARIO(ForkSafetyScenario, "fork")
    ->Describe("workers call a library whose lock a runner thread may hold when the workers are forked")
    ->Starts({StartMethod::kFork, StartMethod::kSpawn, StartMethod::kForkserver})
    ->Variant("atfork-guarded", "the library takes its lock around fork() (pthread_atfork): clean everywhere")
    ->KnownBug("threads-holding-lock",
               "a runner thread holds the library's lock at fork(): every forked worker hangs on it",
               Expectation{{checks::kLiveness, checks::kForkSafe}, {}}, 1)
    ->OnlyUnder({StartMethod::kFork});

}  // namespace sharebench
