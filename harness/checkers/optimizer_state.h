// Checkers for an optimizer shared between workers (A3C's shared Adam or RMSprop): its state (the
// moments and the step counter) must live in shared memory, be made before the workers start, and
// step on the gradients the workers deliver. The mistakes they catch are the ones public A3C
// programs are known for: each worker its own moments, a step counter that is a plain per-process
// number (bias correction per worker), state made lazily by each worker's first step, and
// gradients linked into the shared model once and then replaced locally.
//
// A shared optimizer (torch_support/shared_optimizer.h, or one of a user's own) keeps an
// OptimizerRecord in the arena beside its state and writes into it as it steps; check() passes the
// record to the two checks:
//
//   optimizer-state-shared  every worker stepped with every state tensor and the step counter in
//                           shared memory, the state existed before the workers started, the
//                           shared counter counted the steps (all of them when steps exclude each
//                           other; some when they may overlap), and the shared state moved
//   grads-delivered         at sampled steps, the gradient the optimizer applied is the one the
//                           stepping worker computed (every sample when steps exclude each other;
//                           most when another worker may overwrite it in between), and not the
//                           same gradient sample after sample
//
// Torch-free: the tensors are the optimizer's business; the record holds counts and first ranks.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "harness/results/check_ids.h"

namespace sharebench {

class CheckContext;

// Lives in the arena (ctx.arena().create<OptimizerRecord>(...) in setup()). Plain layout.
struct OptimizerRecord {
  // The optimizer's own step counter, as torch keeps state['step']: a read-modify-write with no
  // atomic, so lock-free steps lose increments (counted against steps_taken).
  std::int64_t step = 0;
  // Every step() counted atomically: what `step` reads when no increment was lost.
  std::atomic<std::int64_t> steps_taken{0};
  // Set by setup() once every state tensor exists in shared memory (before any worker starts).
  std::atomic<std::int32_t> state_made_before_start{0};
  // Evidence from each worker's first step: ranks that stepped with state tensors or the counter
  // outside shared memory, or had to make the state themselves. `first_*`: the lowest such rank.
  std::atomic<std::int32_t> ranks_with_private_state{0};
  std::atomic<std::int32_t> first_private_state_rank{-1};
  std::atomic<std::int32_t> private_state_tensors{0};  // of the first such rank
  std::atomic<std::int32_t> state_tensors{0};          // per worker
  std::atomic<std::int32_t> ranks_with_private_counter{0};
  std::atomic<std::int32_t> first_private_counter_rank{-1};
  std::atomic<std::int32_t> ranks_that_made_state{0};
  std::atomic<std::int32_t> first_rank_that_made_state{-1};

  // One worker's first step: what it found. Call once per worker.
  void record_first_step(int rank, int private_tensors, int tensors, bool counter_private, bool made_state);
};

// `optimizer-state-shared` (see the top of the file). `exclusive`: steps exclude each other (a
// lock), so the shared counter must equal the steps taken. `shared_state_moved`: the shared
// moments hold anything but zeros after training (the caller reads its tensors). Records the
// counter's lost increments as `lost_step_increments`.
void check_optimizer_state_shared(CheckContext& ctx, const OptimizerRecord& record, bool exclusive,
                                  bool shared_state_moved, const std::string& name = checks::kOptimizerStateShared);

// One worker's gradient-delivery evidence, kept by the optimizer in the worker and reported as
// the worker's metrics grad_samples, grad_matched, grad_repeated.
struct GradientSamples {
  std::int64_t samples = 0;   // sampled steps
  std::int64_t matched = 0;   // the applied gradient was the one this worker computed
  std::int64_t repeated = 0;  // the applied gradient was the one applied at this worker's previous sample
  std::uint64_t last_applied = 0;
  void add(std::uint64_t computed, std::uint64_t applied);
};

// `grads-delivered` over every worker's grad_* metrics. `exclusive` as above: every sample must
// match; otherwise at least half. Fails too when a worker with three or more samples applied the
// same gradient every time.
void check_grads_delivered(CheckContext& ctx, bool exclusive, const std::string& name = checks::kGradsDelivered);

}  // namespace sharebench
