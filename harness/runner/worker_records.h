// What the runner records of each worker once a repetition's workers are gone: its exit, steps,
// launch time, error and stderr tail, stall and stacks, memory figures and series; the cell's
// throughput and launch figures; what --chaos did; and the descriptors each worker left open.
// Figures only: the verdicts on them are the detectors' (harness/detectors/).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/results/results.h"
#include "harness/scenario/worker_slot.h"
#include "harness/watchdog/watchdog.h"

namespace sharebench {

// Fills rep.workers and the cell's figures; a run the watchdog called complete in which some
// worker never finished its work (a thread that ended itself) becomes worker-failed.
void record_workers(const Supervision& sup, const HarnessBlock& block, std::int64_t launch_ns, Repetition& rep);

// The chaos_* metrics, summed over the workers (docs/chaos.md); only with --chaos.
void record_chaos_tally(const HarnessBlock& block, Repetition& rep);

// "rank 1 left 2 file descriptor(s) open after work() (...)", one entry per rank that did; under
// --start thread one entry for all the threads, whose host counted them.
std::vector<std::string> worker_descriptor_leaks(const HarnessBlock& block);

}  // namespace sharebench
