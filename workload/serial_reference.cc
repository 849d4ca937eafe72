// serial_reference: one-process training with the exact step function the workers use.
#include "workload/serial_reference.h"

#include <chrono>
#include <functional>
#include <memory>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "torch_support/arena_tensors.h"
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
// Trains one model serially for `steps` steps of `procs` batches each (t = s·procs + r,
// concatenated), updating it with what make_update(params) returns, and caches the result under
// `key` (every workload field that changes the result is in it).
using Update = std::function<void()>;
const SerialReference& train_serially(const WorkloadOptions& w, int procs, std::int64_t steps, const std::string& how,
                                      const std::function<Update(Model&)>& make_update) {
  static std::mutex mu;
  static std::map<std::string, SerialReference> cache;
  const std::string key = fmt::format("{}/{}/{}/{}/{}/{}/{}/{}/{}/{}/{}/{}/{}/{}/{}", w.seed, w.batch, w.lr, w.momentum,
                                      w.input, w.hidden, w.classes, w.train_rows, w.test_rows, procs, steps, w.model,
                                      w.input_shape, w.input_dtype, how);
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(key); it != cache.end()) return it->second;

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
  return cache.emplace(key, std::move(ref)).first->second;
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
