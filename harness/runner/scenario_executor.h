// ScenarioExecutor: the scenario code the runner itself calls (setup() and check()) runs under a
// deadline, as the workers' code does. A setup that blocks (on a pipe, a lock, a peer that never
// comes) would otherwise hang the runner, and with it every later cell.
//
// The calls run on one long-lived thread of the runner (the lane), one at a time, while the
// runner's main thread waits with the deadline. Long-lived, because what setup() starts may be
// tied to the thread that started it: a child it forks with PR_SET_PDEATHSIG (the averaging
// manager) dies when that *thread* ends, and OpenMP's thread count is per thread (the lane applies
// the runner's LibTorch settings when it starts, so a reference computed in check() sums exactly
// as before).
//
// When a call outlives its deadline, the runner records where the lane is stuck (its /proc state,
// wait channel and syscall; with gdb, the runner's stacks) and goes on: the lane is abandoned,
// still blocked (a thread cannot be stopped safely), and a fresh lane serves the next call. The
// caller hands the call shared ownership of everything it touches, so nothing it uses is freed
// under it. Between calls the lane waits on a condition variable, holding no lock, when the main
// thread forks workers. In a ThreadSanitizer build there is no lane (and no deadline on these
// calls): TSan stops watching a child forked from a multi-threaded process, and the thread start
// method's host is forked from the runner.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "harness/config/cell_config.h"

namespace sharebench {

// Thrown when a call did not return in time; what() says what it was and where it is stuck.
class CallTimedOut : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ScenarioExecutor {
 public:
  // The runner's one executor.
  static ScenarioExecutor& instance();

  // Runs `fn` on the lane and waits at most `limit_s`. Rethrows what `fn` threw. Throws
  // CallTimedOut naming `what`, the limit and the stuck lane's state when it did not return.
  // `cell` configures a lane that starts for this call (the runner's LibTorch settings).
  void call(const CellConfig& cell, double limit_s, const std::string& what, bool gdb_stacks, std::function<void()> fn);

  struct Lane;

 private:
  ScenarioExecutor() = default;
  std::shared_ptr<Lane> lane_;
};

}  // namespace sharebench
