// serial_reference: one-process training with the exact step function the workers use.
#include "workload/serial_reference.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <functional>
#include <memory>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "harness/util/child_result.h"
#include "torch_support/arena_tensors.h"
#include "torch_support/torch_runtime.h"
#include "torch_support/shared_optimizer.h"
#include "workload/standard_workload.h"

namespace sharebench {

std::int64_t series_interval(std::int64_t steps) { return std::max<std::int64_t>(1, steps / 100); }

namespace {
std::vector<float> flatten(Model& model) {
  std::vector<float> out;
  for (const auto& p : model.parameters()) {
    const auto c = p.detach().contiguous();
    out.insert(out.end(), c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
  }
  return out;
}
}  // namespace

namespace {
using Update = std::function<void()>;
SerialReference compute_reference(const WorkloadOptions& w, int procs, std::int64_t steps,
                                  const std::function<Update(Model&)>& make_update);
}  // namespace

namespace {
// Trains one model serially for `steps` steps of `procs` batches each (t = s·procs + r,
// concatenated), updating it with what make_update(params) returns, and caches the result under
// `key` (every workload field that changes the result is in it).
const SerialReference& train_serially(const WorkloadOptions& w, int procs, std::int64_t steps, const std::string& how,
                                      const std::function<Update(Model&)>& make_update) {
  static std::mutex mu;
  static std::map<std::string, SerialReference> cache;
  const std::string key = fmt::format("{}/{}/{}/{}/{}/{}/{}/{}/{}/{}/{}/{}/{}/{}/{}", w.seed, w.batch, w.lr, w.momentum,
                                      w.input, w.hidden, w.classes, w.train_rows, w.test_rows, procs, steps, w.model,
                                      w.input_shape, w.input_dtype, how);
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  SerialReference ref = compute_reference(w, procs, steps, make_update);
  return cache.emplace(key, std::move(ref)).first->second;
}
}  // namespace

namespace {
SerialReference train(const WorkloadOptions& w, int procs, std::int64_t steps, const std::function<Update(Model&)>& make_update) {
  SerialReference ref;
  const Dataset data = make_dataset(w);
  const auto owned = make_model(w);
  Model& model = *owned;
  const Update update = make_update(model);
  const std::int64_t every = series_interval(steps);
  double window = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::int64_t s = 0; s < steps; ++s) {
    torch::Tensor x = batch_x(data, w, s * procs), y = batch_y(data, w, s * procs);
    if (procs > 1) {
      std::vector<torch::Tensor> xs, ys;
      for (int r = 0; r < procs; ++r) {
        xs.push_back(batch_x(data, w, s * procs + r));
        ys.push_back(batch_y(data, w, s * procs + r));
      }
      x = torch::cat(xs);
      y = torch::cat(ys);
    }
    window += compute_gradients(model, x, y);
    update();
    if ((s + 1) % every == 0) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ref.loss.push_back(SeriesPoint{static_cast<double>((s + 1) * procs), elapsed, window / every});
      window = 0;
    }
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ref.steps_per_s = elapsed > 0 ? static_cast<double>(steps) / elapsed : 0;
  ref.heldout_loss = heldout_loss(model, data);
  ref.final_parameters = flatten(model);
  return ref;
}

// SerialReference as bytes, to cross the pipe from the child that trained it.
template <typename T>
void put(std::string& out, const T& value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}
template <typename T>
T take(const std::string& in, std::size_t& at) {
  if (at + sizeof(T) > in.size()) throw std::runtime_error("the serial reference came back truncated");
  T value;
  std::memcpy(&value, in.data() + at, sizeof(T));
  at += sizeof(T);
  return value;
}

std::string to_bytes(const SerialReference& ref) {
  std::string out;
  put(out, ref.heldout_loss);
  put(out, ref.steps_per_s);
  put(out, static_cast<std::uint64_t>(ref.loss.size()));
  for (const SeriesPoint& p : ref.loss) put(out, p);
  put(out, static_cast<std::uint64_t>(ref.final_parameters.size()));
  out.append(reinterpret_cast<const char*>(ref.final_parameters.data()), ref.final_parameters.size() * sizeof(float));
  return out;
}

SerialReference from_bytes(const std::string& in) {
  SerialReference ref;
  std::size_t at = 0;
  ref.heldout_loss = take<double>(in, at);
  ref.steps_per_s = take<double>(in, at);
  const auto points = take<std::uint64_t>(in, at);
  for (std::uint64_t i = 0; i < points; ++i) ref.loss.push_back(take<SeriesPoint>(in, at));
  const auto floats = take<std::uint64_t>(in, at);
  if (at + floats * sizeof(float) != in.size()) throw std::runtime_error("the serial reference came back truncated");
  ref.final_parameters.resize(floats);
  std::memcpy(ref.final_parameters.data(), in.data() + at, floats * sizeof(float));
  return ref;
}

// In a CUDA build of LibTorch, in a fork child, so that the runner itself never runs a backward
// pass: there the first backward with a GPU present starts autograd's device threads, and from then
// on every fork child of the runner refuses autograd ("Unable to handle autograd's threading in
// combination with fork-based multiprocessing"; measured on an H100 with LibTorch 2.11,
// docs/gpu.md). A CPU build stays in the process, as before: its autograd starts no thread, and a
// child of a runner that ran a parallel region with several intra-op threads would hang in libgomp
// (docs/architecture.md). SHAREBENCH_SERIAL_REFERENCE_IN_CHILD=1 takes the child's path anyway (its test).
SerialReference compute_reference(const WorkloadOptions& w, int procs, std::int64_t steps,
                                  const std::function<Update(Model&)>& make_update) {
  const char* forced = std::getenv("SHAREBENCH_SERIAL_REFERENCE_IN_CHILD");
  const bool in_child = libtorch_has_cuda() || (forced && std::string(forced) == "1");
  if (!in_child) return train(w, procs, steps, make_update);
  constexpr double kTimeoutS = 3600;  // the deadline of the run bounds it long before this
  return from_bytes(compute_in_child([&] { return to_bytes(train(w, procs, steps, make_update)); }, kTimeoutS));
}
}  // namespace

const SerialReference& serial_large_batch_reference(const WorkloadOptions& w, int procs, std::int64_t steps) {
  return train_serially(w, procs, steps, "sgd", [&w](Model& model) -> Update {
    auto params = model.parameters();
    std::vector<torch::Tensor> buffers;
    for (const auto& p : params) buffers.push_back(torch::zeros_like(p));
    return [params, buffers, &w] { apply_sgd(params, buffers, w.lr, w.momentum); };
  });
}

const SerialReference& serial_optimizer_reference(const WorkloadOptions& w, std::int64_t total_steps,
                                                  const OptimizerOptions& options) {
  const std::string how = fmt::format("{}/{}", options.kind == OptimizerKind::kAdam ? "adam" : "rmsprop", options.lr);
  return train_serially(w, 1, total_steps, how, [&options](Model& model) -> Update {
    // The workers' own optimizer, over a private arena of this process: the same arithmetic.
    auto params = model.parameters();
    std::int64_t bytes = 1 << 20;
    for (const auto& p : params) bytes += 4 * p.numel() * 4 + 2 * SharedArena::kAlignment;
    auto arena = std::make_shared<SharedArena>(SharedArena::create(static_cast<std::size_t>(bytes)));
    publish_parameters(*arena, params, "serial.model");
    publish_optimizer_state(*arena, "serial.opt", params, options.kind);
    auto opt = std::make_shared<SharedOptimizer>(*arena, "serial.opt", params, options, 0);
    return [arena, opt, params] {
      deliver_gradients(params, opt->gradients());
      opt->step();
    };
  });
}

const SerialReference& serial_reference(const WorkloadOptions& w, std::int64_t total_steps) {
  return serial_large_batch_reference(w, 1, total_steps);
}

}  // namespace sharebench
