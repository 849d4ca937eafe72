// Launch to first step, per start method, against the bounds it should approach:
//   BM_Launch/<method>/<workers>/<runner MiB>  the real launcher and watchdog start `workers`
//                               workers of a scenario that does nothing but reach its first step;
//                               time from the launch call until the last worker arrived at the
//                               start barrier (manual time; teardown excluded). Counter
//                               per_worker_ms. The runner first touches <runner MiB> of memory, to
//                               show what the runner's size does to each method.
//   BM_BareForkWaitpid/<MiB>    fork() of this same process, the child _exits at once, waitpid:
//                               fork's bound
//   BM_ExecEmptyTorchProgram    fork + exec of a program that only links LibTorch, waitpid:
//                               spawn's bound (loading LibTorch is most of it)
// This binary links LibTorch like sharebench itself, so a spawned worker pays the same loading
// cost a real one does.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "harness/arena/shared_arena.h"
#include "harness/launch/launcher.h"
#include "harness/scenario/scenario.h"
#include "harness/util/clock.h"
#include "harness/watchdog/watchdog.h"

namespace sharebench::bench {
namespace {

class FirstStepOnly : public Scenario {
 public:
  void setup(SetupContext&) override {}
  void work(WorkerContext& ctx) override {
    ctx.wait_for_start();
    ctx.beat(1);
  }
  void check(CheckContext&) override {}
};
SHAREBENCH_SCENARIO(FirstStepOnly, "bench-first-step")->Describe("benchmarks only: reach the first step, return");

// Memory the runner holds (and has touched) while it launches: fork copies its page tables.
class RunnerBallast {
 public:
  explicit RunnerBallast(std::size_t mib) : bytes_(mib << 20) {
    if (bytes_ == 0) return;
    data_ = std::make_unique<char[]>(bytes_);
    for (std::size_t i = 0; i < bytes_; i += 4096) data_[i] = 1;
  }

 private:
  std::size_t bytes_;
  std::unique_ptr<char[]> data_;
};

StartMethod method_of(std::int64_t i) { return all_start_methods().at(static_cast<std::size_t>(i)); }

void BM_Launch(benchmark::State& state) {
  const StartMethod method = method_of(state.range(0));
  const int workers = static_cast<int>(state.range(1));
  RunnerBallast ballast(static_cast<std::size_t>(state.range(2)));
  CellConfig cell;
  cell.scenario = "bench-first-step";
  cell.variant = "default";
  cell.start = method;
  cell.procs = workers;
  auto launcher = make_launcher(method);
  double total_s = 0;
  for (auto _ : state) {
    SharedArena arena = SharedArena::create(std::size_t{4} << 20);
    auto* block = arena.create<HarnessBlock>(HarnessBlock::kRegionName, workers);
    const std::int64_t t0 = monotonic_ns();
    std::int64_t last_arrival = t0;
    {
      auto group = launcher->launch(cell, arena);
      const Supervision sup = supervise(*group, *block, WatchdogLimits{30, 60, false});
      if (sup.status != RunStatus::kCompleted) {
        state.SkipWithError(("launch failed: " + sup.message).c_str());
        return;
      }
    }
    for (int r = 0; r < workers; ++r) last_arrival = std::max(last_arrival, block->slots[r].arrived_ns);
    const double s = (last_arrival - t0) * 1e-9;
    total_s += s;
    state.SetIterationTime(s);
  }
  state.SetLabel(std::string(to_string(method)));
  state.counters["per_worker_ms"] =
      benchmark::Counter(total_s * 1e3 / workers / static_cast<double>(state.iterations()));
}

void launch_args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"method", "workers", "runner_mib"});
  for (std::int64_t m = 0; m < 3; ++m) {  // fork, spawn, forkserver (thread is not a launch of processes)
    for (std::int64_t w : {1, 2, 8}) b->Args({m, w, 0});
    b->Args({m, 1, 1024});
  }
}
BENCHMARK(BM_Launch)->Apply(launch_args)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(8);

void BM_BareForkWaitpid(benchmark::State& state) {
  RunnerBallast ballast(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
}
BENCHMARK(BM_BareForkWaitpid)->ArgName("runner_mib")->Arg(0)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ExecEmptyTorchProgram(benchmark::State& state) {
  const std::string program = SHAREBENCH_EMPTY_TORCH_PROGRAM;
  for (auto _ : state) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      char* argv[] = {const_cast<char*>(program.c_str()), nullptr};
      ::execv(argv[0], argv);
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      state.SkipWithError("the empty LibTorch program failed");
      return;
    }
  }
}
BENCHMARK(BM_ExecEmptyTorchProgram)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(8);

}  // namespace
}  // namespace sharebench::bench
