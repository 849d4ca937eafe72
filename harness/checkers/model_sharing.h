// model_sharing: the `model-shared` check. A worker that binds a model to shared memory promises
// that the model stays there for the whole of its work; a copy made after binding (a clone, a
// dtype or device move, torch::load into the module) breaks the promise without a word, and the
// worker then reads or trains a private model. As work() returns, the harness asks every promise
// where its bytes are now and looks each span up in /proc/self/maps: a span in a private mapping
// (the heap, a copy-on-write page of the runner's) is a copy. Not seen: a copy the promise does
// not hold (a second module cloned from the bound one and used instead); the message then gives
// how much private memory each worker added after binding, a figure for the reader, not a verdict
// (a training step's activations add more than a model's bytes).
//
// sharebench::torch's bind_parameters makes the promise for every model bound through it; a
// scenario that shares memory its own way calls promise_shared_model itself. Torch-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/results/results.h"

namespace sharebench {

struct HarnessBlock;
struct WorkerSlot;

// One piece of the promised model: its name (for the message), where its bytes are now, how many.
struct SharedSpan {
  std::string name;
  const void* data = nullptr;
  std::size_t bytes = 0;
};

// What a promise answers as work() returns: its spans, and the private bytes the worker holds for
// it by design (its own gradients), which the memory comparison leaves out.
struct SharedModelNow {
  std::vector<SharedSpan> spans;
  std::size_t private_by_design_bytes = 0;
};

// Inside work(): promises that the spans `where_now` returns stay in shared memory until work()
// returns; `where_now` is asked once, then, on the worker's own thread. Outside a worker (setup(),
// check(), a program of one's own) it does nothing.
void promise_shared_model(std::string what, std::function<SharedModelNow()> where_now);

// Whether [data, data + bytes) lies wholly in shared mappings of this process (MAP_SHARED: an
// arena, a /dev/shm segment, a memfd), read from /proc/self/maps.
bool in_shared_memory(const void* data, std::size_t bytes);

// --- harness side ------------------------------------------------------------------------------

// run_worker: promises made from here on report into `slot` (nullptr: stop, dropping them).
void collect_model_promises_into(WorkerSlot* slot);
// run_worker, as work() returned: asks every promise where it is and writes the answer to the slot.
void settle_model_promises();

// The runner, after the scenario's check(): `model-shared` for every worker that promised, or
// nullopt when none did. It fails when any promised byte is in private memory. `peak_uss_mb`: each
// worker process's peak private memory (empty under the thread start method, whose ranks share
// one process), for the figure the message gives: how much private memory a worker added after
// binding beyond its gradients.
std::optional<Check> model_shared_check(const HarnessBlock& block, const std::map<int, double>& peak_uss_mb);

}  // namespace sharebench
