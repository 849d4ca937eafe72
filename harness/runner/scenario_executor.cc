// ScenarioExecutor: a lane thread, a one-job mailbox, and a deadline on the waiting side.
#include "harness/runner/scenario_executor.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "harness/launch/launcher.h"
#include "harness/watchdog/process_probe.h"
#include "harness/proc/sanitizer_reports.h"

namespace sharebench {

namespace {
struct Job {
  std::function<void()> fn;
  bool done = false;
  std::exception_ptr error;
};
}  // namespace

struct ScenarioExecutor::Lane {
  std::mutex mutex;
  std::condition_variable changed;
  std::shared_ptr<Job> job;  // the call in progress, or none
  pid_t tid = 0;
};

ScenarioExecutor& ScenarioExecutor::instance() {
  static auto* executor = new ScenarioExecutor();  // never destroyed: an abandoned lane may outlive main()
  return *executor;
}

void ScenarioExecutor::call(const CellConfig& cell, double limit_s, const std::string& what, bool gdb_stacks,
                            std::function<void()> fn) {
  // Under ThreadSanitizer the runner stays single-threaded: after a fork from a multi-threaded
  // process TSan stops watching the child's main thread, and the thread start method's host is
  // such a child. The call then runs here, without the deadline.
  if (std::strcmp(sanitizer_in_build(), "ThreadSanitizer") == 0) {
    fn();
    return;
  }
  if (!lane_) {
    lane_ = std::make_shared<Lane>();
    std::thread([lane = lane_, cell] {
      {
        std::lock_guard<std::mutex> lock(lane->mutex);
        lane->tid = static_cast<pid_t>(::syscall(SYS_gettid));
      }
      run_runner_init_hook(cell);  // intra-op and BLAS threads as the runner's, on this thread too
      for (;;) {
        std::shared_ptr<Job> job;
        {
          std::unique_lock<std::mutex> lock(lane->mutex);
          lane->changed.wait(lock, [&] { return lane->job && !lane->job->done; });
          job = lane->job;
        }
        std::exception_ptr error;
        try {
          job->fn();
        } catch (...) {
          error = std::current_exception();
        }
        // What the call captured (the scenario, the arena) is released here, before the runner
        // goes on: the last reference must stay the runner's, or an arena's descriptor could be
        // closed on this thread while the runner counts its descriptors.
        job->fn = nullptr;
        std::lock_guard<std::mutex> lock(lane->mutex);
        job->error = error;
        job->done = true;
        lane->changed.notify_all();
      }
    }).detach();
  }
  auto job = std::make_shared<Job>();
  job->fn = std::move(fn);
  std::unique_lock<std::mutex> lock(lane_->mutex);
  lane_->job = job;
  lane_->changed.notify_all();
  if (lane_->changed.wait_for(lock, std::chrono::duration<double>(limit_s), [&] { return job->done; })) {
    lane_->job.reset();
    lock.unlock();
    if (job->error) std::rethrow_exception(job->error);
    return;
  }
  const pid_t tid = lane_->tid;
  lock.unlock();
  lane_.reset();  // abandoned, still blocked in the call; the next call gets a fresh lane
  std::string where = tid > 0 ? describe_process(::getpid(), tid) : std::string("its thread had not started");
  if (gdb_stacks) {
    // gdb attaches to this very process and stops it, this thread included, while it reads the
    // stacks; its own timeout bounds that.
    const std::string stacks = sharebench::gdb_stacks(::getpid());
    if (!stacks.empty()) where += "\nthe runner's stacks:\n" + stacks;
  }
  throw CallTimedOut(fmt::format("{} did not return within {} s (--deadline), and the runner went on without it; stuck: {}",
                                 what, limit_s, where));
}

}  // namespace sharebench
