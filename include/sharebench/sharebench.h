// <sharebench/sharebench.h>: everything an out-of-tree sharing strategy needs, in one include that
// internal moves never break. Link sharebench::cli (the command line, with `run`, `exec`, `report`
// and the rest) and write main() as
//
//   #include <sharebench/sharebench.h>
//   int main(int argc, char** argv) { return sharebench::run_cli(argc, argv); }
//
// What it brings (docs/adding-a-scenario.md walks through each):
//   registration and contexts   Scenario, SHAREBENCH_SCENARIO, SetupContext, WorkerContext,
//                               CheckContext, CellConfig, Expectation, check ids (checks::k...)
//   locks and barriers          ProcessMutex, ProcessBarrier: in the arena, watched by the
//                               harness's lock-order, liveness and wait-for detectors
//   checkers                    guarded sections, version stripes, replica agreement, value checks,
//                               worker overlap, optimizer state, model sharing
//   leak helpers                run_shm_prefix() and the descriptor and /dev/shm leak checks
// A strategy that shares a LibTorch model adds <sharebench/torch.h> and links sharebench::torch.
#pragma once

#include "harness/checkers/guarded_section.h"
#include "harness/checkers/model_sharing.h"
#include "harness/checkers/optimizer_state.h"
#include "harness/checkers/replica_agreement.h"
#include "harness/checkers/value_checks.h"
#include "harness/checkers/version_stripes.h"
#include "harness/checkers/worker_overlap.h"
#include "harness/proc/leak_check.h"
#include "harness/results/check_ids.h"
#include "harness/scenario/scenario.h"
#include "harness/sync/process_barrier.h"
#include "harness/sync/process_mutex.h"
#include "app/run_cli.h"
