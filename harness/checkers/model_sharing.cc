// model_sharing: promises that a model stays in shared memory, kept per worker thread, settled as
// work() returns, and the `model-shared` check over every worker's answer.
#include "harness/checkers/model_sharing.h"

#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <exception>
#include <utility>

#include <fmt/format.h>

#include "harness/scenario/worker_slot.h"
#include "harness/proc/memory_probe.h"
#include "harness/util/text.h"

namespace sharebench {

namespace {

struct Promise {
  std::string what;
  std::function<SharedModelNow()> where_now;
};

// Per thread: under the thread start method every rank runs on its own thread of one process.
thread_local WorkerSlot* t_slot = nullptr;
thread_local std::vector<Promise>* t_promises = nullptr;

struct Mapping {
  std::uintptr_t begin = 0, end = 0;
  bool shared = false;
};

std::vector<Mapping> read_mappings() {
  std::vector<Mapping> out;
  std::FILE* f = std::fopen("/proc/self/maps", "re");
  if (!f) return out;
  char line[512];
  while (std::fgets(line, sizeof line, f)) {
    std::uintptr_t b = 0, e = 0;
    char perms[8] = {};
    if (std::sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s", &b, &e, perms) != 3) continue;
    out.push_back(Mapping{b, e, perms[3] == 's'});
  }
  std::fclose(f);
  return out;  // the kernel lists them in address order
}

// Whether [p, p + n) is covered by shared mappings alone, in `maps` (sorted, disjoint).
bool covered_by_shared(const std::vector<Mapping>& maps, std::uintptr_t p, std::size_t n) {
  const std::uintptr_t end = p + std::max<std::size_t>(n, 1);
  auto it = std::upper_bound(maps.begin(), maps.end(), p, [](std::uintptr_t a, const Mapping& m) { return a < m.end; });
  while (p < end) {
    if (it == maps.end() || it->begin > p || !it->shared) return false;
    p = it->end;
    ++it;
  }
  return true;
}

double mib(std::int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

}  // namespace

bool in_shared_memory(const void* data, std::size_t bytes) {
  return covered_by_shared(read_mappings(), reinterpret_cast<std::uintptr_t>(data), bytes);
}

void promise_shared_model(std::string what, std::function<SharedModelNow()> where_now) {
  if (!t_slot || !t_promises) return;
  if (t_promises->empty()) {
    // The baseline of the memory comparison: the process's private memory with the model bound.
    if (auto m = sample_memory(::getpid())) t_slot->model_promise.uss_kb_at_promise = static_cast<std::int64_t>(m->uss_mb * 1024);
    copy_text(t_slot->model_promise.what, sizeof t_slot->model_promise.what, what);
  }
  t_promises->push_back(Promise{std::move(what), std::move(where_now)});
}

void collect_model_promises_into(WorkerSlot* slot) {
  delete t_promises;
  t_promises = slot ? new std::vector<Promise>() : nullptr;
  t_slot = slot;
}

void settle_model_promises() {
  if (!t_slot || !t_promises || t_promises->empty()) {
    collect_model_promises_into(nullptr);
    return;
  }
  WorkerSlot::ModelPromise& out = t_slot->model_promise;
  const std::vector<Mapping> maps = read_mappings();
  for (const Promise& promise : *t_promises) {
    SharedModelNow now;
    try {
      now = promise.where_now();
    } catch (const std::exception&) {
      continue;  // a promise that cannot say where it is makes no claim
    }
    out.by_design_bytes += static_cast<std::int64_t>(now.private_by_design_bytes);
    for (const SharedSpan& span : now.spans) {
      if (span.bytes == 0) continue;
      ++out.spans;
      out.bytes += static_cast<std::int64_t>(span.bytes);
      if (covered_by_shared(maps, reinterpret_cast<std::uintptr_t>(span.data), span.bytes)) continue;
      ++out.private_spans;
      out.private_bytes += static_cast<std::int64_t>(span.bytes);
      if (out.first_private[0] == '\0') copy_text(out.first_private, sizeof out.first_private, span.name);
    }
  }
  out.settled = 1;
  collect_model_promises_into(nullptr);  // drops the promises and what they held (the model's tensors)
}

std::optional<Check> model_shared_check(const HarnessBlock& block, const std::map<int, double>& peak_uss_mb) {
  int promised = 0;
  std::vector<std::string> broken;
  double model_mib = 0;
  std::string what;
  for (int r = 0; r < block.procs; ++r) {
    const WorkerSlot::ModelPromise& p = block.slots[r].model_promise;
    if (!p.settled || p.bytes == 0) continue;
    ++promised;
    model_mib = std::max(model_mib, mib(p.bytes));
    if (what.empty()) what = p.what;
    if (p.private_bytes > 0) {
      broken.push_back(fmt::format("rank {}: {} of {} tensors ({:.2f} of {:.2f} MiB, first {}) are in private memory",
                                   r, p.private_spans, p.spans, mib(p.private_bytes), mib(p.bytes), p.first_private));
    }
  }
  if (promised == 0) return std::nullopt;
  if (!broken.empty()) {
    return Check{checks::kModelShared, Verdict::kFail, static_cast<double>(broken.size()),
                 fmt::format("the {} bound to shared memory was copied after binding (a clone, a dtype or device move, "
                             "torch::load into the module): {}",
                             what, fmt::join(broken, "; "))};
  }

  // Every promised span is where it should be. What the worker's private memory did after binding
  // is a figure, not a verdict: activations and the allocator's caches grow it by more than a
  // whole model's bytes (56 MiB on a 26 MiB transformer's training step, docs/your-model.md), so
  // a size cannot tell a copy from them.
  double worst = 0;
  int worst_rank = -1;
  for (int r = 0; r < block.procs; ++r) {
    const WorkerSlot::ModelPromise& p = block.slots[r].model_promise;
    const auto peak = peak_uss_mb.find(r);
    if (!p.settled || p.bytes == 0 || p.uss_kb_at_promise == 0 || peak == peak_uss_mb.end()) continue;
    const double grown = peak->second - static_cast<double>(p.uss_kb_at_promise) / 1024 - mib(p.by_design_bytes);
    if (worst_rank < 0 || grown > worst) {
      worst = grown;
      worst_rank = r;
    }
  }
  std::string message = fmt::format("every worker's {} ({:.2f} MiB, {} worker(s)) stayed in shared memory until its "
                                    "work ended", what, model_mib, promised);
  if (worst_rank >= 0) {
    message += fmt::format("; the most a worker's private memory grew after binding, its gradients left out: "
                           "{:.1f} MiB (rank {}; activations and caches, not judged)", worst, worst_rank);
  }
  return Check{checks::kModelShared, Verdict::kPass, worst_rank >= 0 ? worst : 0.0, message};
}

}  // namespace sharebench
