// The worker side of every start method: attach, build the scenario, run it, publish the outcome
// in the worker's slot. Also the hidden `__worker` mode that spawn execs into.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <set>
#include <string>

#include <fmt/format.h>

#include "harness/util/clock.h"

#include "harness/chaos/chaos_schedule.h"
#include "harness/checkers/model_sharing.h"
#include "harness/launch/launcher.h"
#include "harness/proc/sanitizer_reports.h"
#include "harness/proc/leak_check.h"
#include "harness/proc/memory_probe.h"
#include "harness/scenario/scenario.h"

namespace sharebench {

namespace {
// The calling process's threads (/proc/self/task): a worker at one intra-op thread should run one,
// and a BLAS or OpenMP pool it started shows here (docs/performance.md: a spinning OpenBLAS thread).
std::int32_t count_own_threads() {
  std::error_code ec;
  std::int32_t n = 0;
  for (std::filesystem::directory_iterator it("/proc/self/task", ec), end; !ec && it != end; it.increment(ec)) ++n;
  return n;
}
}  // namespace

namespace {
WorkerInitHook g_init_hook = nullptr;

// The first line only: LibTorch appends a C++ backtrace to its messages.
void write_error(WorkerSlot& slot, std::string text) {
  text = text.substr(0, text.find('\n'));
  const std::size_t n = std::min(text.size(), static_cast<std::size_t>(WorkerSlot::kMaxError - 1));
  std::memcpy(slot.error, text.data(), n);
  slot.error[n] = '\0';
}

// The slot of the worker running on this thread, for the exit handler.
thread_local WorkerSlot* t_slot = nullptr;
thread_local int t_rank = -1;

// A worker that calls exit() ends there and then: no static destructor of the program it was
// forked from (LibTorch's, the runner's forkserver handle, a scenario's globals) runs in it, so it
// cannot disturb the runner, the forkserver or a later cell. Its slot says what happened.
void end_worker_at_exit(int status, void* /*unused*/) {
  if (WorkerSlot* slot = t_slot; slot && slot->phase.load() != static_cast<std::int32_t>(WorkerPhase::kDone) &&
                                 slot->error[0] == '\0') {
    write_error(*slot, fmt::format("rank {} called exit({}) at step {}, inside work()", t_rank, status,
                                   slot->steps.load()));
  }
  std::fflush(nullptr);
  ::_exit(status);
}

// A worker process's stderr goes to rank-<r>.stderr in the repetition's private directory, so what
// it printed before dying (std::terminate's reason, an assertion, a sanitizer) reaches the
// results. Threads share their host's stderr: not redirected.
void capture_stderr(const HarnessBlock& block, const CellConfig& cell, int rank) {
  if (cell.start == StartMethod::kThread || block.private_dir[0] == '\0') return;
  const std::string path = fmt::format("{}/rank-{}.stderr", block.private_dir, rank);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_APPEND, 0600);
  if (fd < 0) return;  // the run goes on uncaptured rather than fail the worker
  std::fflush(stderr);
  ::dup2(fd, STDERR_FILENO);
  ::close(fd);
}

void install_exit_handler_once() {
  // Per process (a fork child starts with the runner's false); atomic: under the thread start
  // method every rank's thread gets here at once.
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  ::on_exit(&end_worker_at_exit, nullptr);
}
}  // namespace

void set_worker_init_hook(WorkerInitHook hook) { g_init_hook = hook; }

namespace {
RunnerInitHook g_runner_hook = nullptr;
}  // namespace

void set_runner_init_hook(RunnerInitHook hook) { g_runner_hook = hook; }
void run_runner_init_hook(const CellConfig& base) {
  if (g_runner_hook) g_runner_hook(base);
}

// This process's private memory (USS), in kB, into a slot's field; left as it was when unreadable.
void read_own_uss_into(std::atomic<std::int64_t>& into) {
  if (auto m = sample_memory(::getpid())) into.store(static_cast<std::int64_t>(m->uss_mb * 1024));
}

int run_worker(const CellConfig& cell, SharedArena& arena, int rank) {
  HarnessBlock* block = nullptr;
  try {
    block = arena.lookup<HarnessBlock>(HarnessBlock::kRegionName);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sharebench worker %d: %s\n", rank, e.what());
    return kWorkerExitSetupFailed;
  }
  WorkerSlot& slot = block->slots[rank];
  t_slot = &slot;
  t_rank = rank;
  install_exit_handler_once();
  capture_stderr(*block, cell, rank);
  if (cell.start != StartMethod::kThread) {
    mark_worker_process(rank);
    route_sanitizer_reports(block->private_dir);  // threads: their host did it, once
  }
  slot.pid.store(::getpid());
  slot.tid.store(static_cast<std::int32_t>(::syscall(SYS_gettid)));
  kill_on_next_lock_when_armed(&slot.kill_holding_lock);
  report_barrier_waits_in(&slot.waiting_barrier);
  struct StopCounting {
    ~StopCounting() {  // the slot dies with the arena
      kill_on_next_lock_when_armed(nullptr);
      report_barrier_waits_in(nullptr);
    }
  } stop_counting;
  try {
    if (g_init_hook) g_init_hook(cell);
    const ScenarioInfo* info = ScenarioRegistry::instance().find(cell.scenario);
    if (!info) throw std::runtime_error(fmt::format("scenario '{}' is not registered in this binary", cell.scenario));
    // Descriptors are per process: under the thread start method a rank's cannot be told apart.
    const bool own_process = cell.start != StartMethod::kThread;
    auto scenario = info->create(cell);
    scenario->prepare_worker_process();
    const std::set<int> fds_before = own_process ? open_descriptors() : std::set<int>{};
    {
      WorkerContext ctx(cell, arena, rank);
      collect_model_promises_into(&slot);
      start_chaos(cell, rank, &slot.chaos, &block->chaos_budget);
      slot.phase.store(static_cast<std::int32_t>(WorkerPhase::kAttached));
      slot.last_beat_ns.store(monotonic_ns());
      // The memory check's first reading: a work() too short for the watchdog's samples is judged
      // on this and the one as it returns.
      if (own_process) read_own_uss_into(slot.uss_kb_at_start);
      scenario->work(ctx);
      ctx.finish();
      stop_chaos();
      settle_model_promises();  // where the model it bound is now, before anything of it is freed
      // The exact end of the memory check's window: the watchdog's last sample may be older.
      if (own_process) {
        read_own_uss_into(slot.uss_kb_at_end);
        slot.threads_at_end.store(count_own_threads());
      }
      // Its work is done; a worker that hangs from here on (a destructor that never returns) is
      // reported as "done, exiting".
      slot.phase.store(static_cast<std::int32_t>(WorkerPhase::kDone));
    }
    scenario.reset();  // what the scenario held open (a socket, a process group) is closed now
    if (own_process) {
      int leaked = 0;
      const std::string names = describe_new_descriptors(fds_before, open_descriptors(), &leaked);
      slot.leaked_fds = leaked;
      std::snprintf(slot.leaked_fd_names, sizeof slot.leaked_fd_names, "%s", names.c_str());
    }
    return kWorkerExitOk;
  } catch (const std::exception& e) {
    write_error(slot, e.what());
  } catch (...) {
    write_error(slot, "unknown exception");
  }
  collect_model_promises_into(nullptr);  // a failed worker's promises are not judged
  stop_chaos();
  if (slot.finished_ns == 0) slot.finished_ns = monotonic_ns();
  slot.phase.store(static_cast<std::int32_t>(WorkerPhase::kFailed));
  // A failed worker must not leave its siblings waiting at the start barrier.
  block->start_barrier.abort();
  return kWorkerExitFailed;
}

bool maybe_run_as_worker(int argc, char** argv, int* exit_code) {
  if (argc < 2 || std::strcmp(argv[1], "__worker") != 0) return false;
  // argv: __worker <arena-fd> <rank> <cell-json>
  if (argc != 5) {
    std::fprintf(stderr, "sharebench: __worker needs <arena-fd> <rank> <cell-json>\n");
    *exit_code = kWorkerExitSetupFailed;
    return true;
  }
  try {
    const int fd = std::stoi(argv[2]);
    const int rank = std::stoi(argv[3]);
    const CellConfig cell = CellConfig::from_json(argv[4]);
    SharedArena arena = SharedArena::attach(fd);
    ::close(fd);
    *exit_code = run_worker(cell, arena, rank);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sharebench worker: %s\n", e.what());
    *exit_code = kWorkerExitSetupFailed;
  }
  std::fflush(nullptr);
  ::_exit(*exit_code);  // no static destructors: LibTorch's can be slow and are not needed
}

}  // namespace sharebench
