// Test-only scenarios (torch-free) that exercise launchers and the watchdog with real processes.
//   probe/ok        every worker writes (rank + 1) * 10 into its arena cell and beats 5 times
//   probe/exit-code worker r exits with code r + 3 straight from work() (process methods only)
//   probe/signal    rank 1 kills itself with SIGKILL
//   probe/hang      rank 0 stops beating and sleeps; the watchdog must call it a hang
//   probe/leak-fd   setup() keeps a descriptor open (in `leaked_fd`, for the test to close)
//   probe/leak-shm  setup() leaves /dev/shm/<run_shm_prefix()>leak behind
#pragma once

namespace sharebench::testing {
inline constexpr const char* kProbeRegion = "probe.values";
extern int leaked_fd;
}  // namespace sharebench::testing
