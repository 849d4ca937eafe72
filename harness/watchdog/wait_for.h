// wait_for: the wait-for graph of a hung cell, read from the arena while the workers are frozen
// (SIGSTOP) and before they are killed (a kill changes robust mutexes). Every registered
// ProcessMutex says who owns it and which ranks wait for it; every worker slot says at which
// registered barrier it waits and at which step it is. The report follows rank → owner edges to a
// cycle ("rank 0 (step 1) holds A and waits for B (held by rank 1); ..."), or lists the stuck waits.
#pragma once

#include <string>

#include "harness/scenario/worker_slot.h"

namespace sharebench {

struct WaitForReport {
  bool cycle = false;
  bool any_wait = false;  // some rank waited for a registered lock or at a registered barrier
  std::string text;
};

WaitForReport describe_wait_for(const HarnessBlock& block);

}  // namespace sharebench
