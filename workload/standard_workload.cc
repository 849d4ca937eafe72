// The standard workload: model, data, batches, held-out loss.
#include "workload/standard_workload.h"

#include "harness/config/model_options.h"
#include "torch_support/torch_runtime.h"

namespace sharebench {

MlpImpl::MlpImpl(std::int64_t input, std::int64_t hidden, std::int64_t classes) {
  fc1 = register_module("fc1", torch::nn::Linear(input, hidden));
  fc2 = register_module("fc2", torch::nn::Linear(hidden, hidden));
  fc3 = register_module("fc3", torch::nn::Linear(hidden, classes));
}

torch::Tensor MlpImpl::forward(torch::Tensor x) {
  x = torch::relu(fc1->forward(x));
  x = torch::relu(fc2->forward(x));
  return fc3->forward(x);
}

Dataset make_dataset(const WorkloadOptions& w) {
  torch::NoGradGuard no_grad;
  seed_cpu_generator(w.seed * 7919 + 17);
  const std::int64_t train = training_rows(w), rows = train + heldout_rows(w);
  torch::Tensor x, y;
  if (w.model == "mlp") {
    x = torch::randn({rows, w.input});
    // A fixed random teacher: a narrower two-layer net; labels are its argmax.
    torch::nn::Linear t1(w.input, 32), t2(32, w.classes);
    y = t2->forward(torch::relu(t1->forward(x))).argmax(1);
  } else {
    const SampleInput in = sample_input(w);
    std::vector<std::int64_t> sizes{rows};
    sizes.insert(sizes.end(), in.shape.begin(), in.shape.end());
    x = in.integer ? torch::randint(0, in.vocab, sizes, torch::kInt64) : torch::randn(sizes);
    const auto teacher = make_teacher(w);
    std::vector<torch::Tensor> outs;
    for (std::int64_t at = 0; at < rows; at += 256) outs.push_back(teacher->forward(x.narrow(0, at, std::min<std::int64_t>(256, rows - at))));
    y = torch::cat(outs).to(torch::kFloat32).contiguous();
  }
  Dataset d;
  d.train_x = x.narrow(0, 0, train).contiguous();
  d.train_y = y.narrow(0, 0, train).contiguous();
  d.test_x = x.narrow(0, train, rows - train).contiguous();
  d.test_y = y.narrow(0, train, rows - train).contiguous();
  return d;
}

std::int64_t batches_per_epoch(const WorkloadOptions& w) { return std::max<std::int64_t>(1, training_rows(w) / w.batch); }

torch::Tensor batch_x(const Dataset& d, const WorkloadOptions& w, std::int64_t global_step) {
  return d.train_x.narrow(0, (global_step % batches_per_epoch(w)) * w.batch, w.batch);
}

torch::Tensor batch_y(const Dataset& d, const WorkloadOptions& w, std::int64_t global_step) {
  return d.train_y.narrow(0, (global_step % batches_per_epoch(w)) * w.batch, w.batch);
}

torch::Tensor task_loss(const torch::Tensor& outputs, const torch::Tensor& targets) {
  if (targets.scalar_type() == torch::kInt64) return torch::nn::functional::cross_entropy(outputs, targets);
  return torch::mse_loss(outputs, targets);
}

double heldout_loss(Model& model, const Dataset& d) {
  torch::NoGradGuard no_grad;
  return task_loss(model.forward(d.test_x), d.test_y).item<double>();
}

}  // namespace sharebench

namespace sharebench {

double compute_gradients(Model& model, const torch::Tensor& x, const torch::Tensor& y) {
  for (auto& p : model.parameters()) {
    if (p.grad().defined()) p.grad().zero_();
  }
  auto loss = task_loss(model.forward(x), y);
  loss.backward();
  return loss.item<double>();
}

void apply_sgd(const std::vector<torch::Tensor>& params, const std::vector<torch::Tensor>& momentum_buffers,
               double lr, double momentum) {
  // Plain loops over the floats rather than Tensor::add_: the read-modify-write of the shared
  // parameters then happens in this project's own (instrumented) code, where ThreadSanitizer can
  // see it race under Hogwild and see it ordered by the lock under `locked`. The loop vectorises;
  // it is as fast as add_ at these sizes.
  const float step = static_cast<float>(lr);
  const float mu = static_cast<float>(momentum);
  for (std::size_t i = 0; i < params.size(); ++i) {
    const torch::Tensor g = params[i].grad().contiguous();
    TORCH_CHECK(params[i].is_contiguous() && params[i].scalar_type() == torch::kFloat32,
                "apply_sgd needs contiguous float32 parameters");
    float* p = params[i].data_ptr<float>();
    const float* gp = g.data_ptr<float>();
    const std::int64_t n = params[i].numel();
    if (momentum > 0) {
      float* b = momentum_buffers[i].data_ptr<float>();
      for (std::int64_t k = 0; k < n; ++k) {
        b[k] = mu * b[k] + gp[k];
        p[k] -= step * b[k];
      }
    } else {
      for (std::int64_t k = 0; k < n; ++k) p[k] -= step * gp[k];
    }
  }
}

}  // namespace sharebench
