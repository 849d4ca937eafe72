// model_zoo: the built-in models and the TorchScript wrapper.
#include "workload/model_zoo.h"

#include <torch/script.h>

#include <fmt/format.h>

#include "harness/config/flag_values.h"
#include "harness/config/model_options.h"
#include "torch_support/torch_runtime.h"
#include "workload/standard_workload.h"

namespace sharebench {

namespace {
constexpr std::int64_t kOutputs = 10;

// Two convolutions with pooling, then two linear layers: 3x32x32 → 10.
struct ConvNetImpl : torch::nn::Module {
  ConvNetImpl(std::int64_t channels, std::int64_t hidden) {
    conv1 = register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, channels, 3).padding(1)));
    conv2 = register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, 2 * channels, 3).padding(1)));
    fc1 = register_module("fc1", torch::nn::Linear(2 * channels * 8 * 8, hidden));
    fc2 = register_module("fc2", torch::nn::Linear(hidden, kOutputs));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::max_pool2d(torch::relu(conv1->forward(x)), 2);
    x = torch::max_pool2d(torch::relu(conv2->forward(x)), 2);
    x = torch::relu(fc1->forward(x.flatten(1)));
    return fc2->forward(x);
  }
  torch::nn::Conv2d conv1{nullptr}, conv2{nullptr};
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(ConvNet);

// Token embedding, a transformer encoder (no dropout: every process computes the same thing), the
// mean over positions, a linear head: [batch, tokens] → 10.
struct TransformerImpl : torch::nn::Module {
  TransformerImpl(std::int64_t vocab, std::int64_t width, std::int64_t layers, std::int64_t heads) {
    embed = register_module("embed", torch::nn::Embedding(vocab, width));
    encoder = register_module(
        "encoder", torch::nn::TransformerEncoder(
                       torch::nn::TransformerEncoderOptions(
                           torch::nn::TransformerEncoderLayerOptions(width, heads).dim_feedforward(4 * width).dropout(0.0),
                           layers)));
    head = register_module("head", torch::nn::Linear(width, kOutputs));
  }
  torch::Tensor forward(const torch::Tensor& tokens) {
    torch::Tensor x = embed->forward(tokens).transpose(0, 1);  // [tokens, batch, width]
    x = encoder->forward(x);
    return head->forward(x.mean(0));
  }
  torch::nn::Embedding embed{nullptr};
  torch::nn::TransformerEncoder encoder{nullptr};
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(Transformer);

template <typename Holder>
class ModuleModel : public Model {
 public:
  explicit ModuleModel(Holder module) : module_(std::move(module)) {}
  std::vector<torch::Tensor> parameters() override { return module_->parameters(); }
  torch::Tensor forward(const torch::Tensor& x) override { return module_->forward(x); }

 private:
  Holder module_;
};

class ScriptModel : public Model {
 public:
  explicit ScriptModel(const std::string& path) {
    try {
      module_ = torch::jit::load(path);
    } catch (const std::exception& e) {
      throw UsageError(fmt::format("--model {}: not a TorchScript file LibTorch can load ({})", path,
                                   std::string(e.what()).substr(0, 200)));
    }
    module_.eval();  // dropout off, batch norm on its running statistics: the same in every process
    for (const auto& p : module_.parameters()) {
      if (p.scalar_type() != torch::kFloat32) {
        throw UsageError(fmt::format("--model {}: every parameter must be float32 (one is {})", path,
                                     c10::toString(p.scalar_type())));
      }
      params_.push_back(p);
    }
    if (params_.empty()) throw UsageError(fmt::format("--model {}: the model has no parameters to share", path));
  }
  std::vector<torch::Tensor> parameters() override { return params_; }
  torch::Tensor forward(const torch::Tensor& x) override {
    const torch::IValue out = module_.forward({x});
    if (!out.isTensor()) throw std::runtime_error("the TorchScript model's forward() must return one tensor");
    return out.toTensor();
  }

 private:
  torch::jit::Module module_;
  std::vector<torch::Tensor> params_;
};

std::unique_ptr<Model> build(const WorkloadOptions& w) {
  if (w.model == "mlp") return std::make_unique<ModuleModel<Mlp>>(Mlp(w.input, w.hidden, w.classes));
  if (w.model == "convnet-s") return std::make_unique<ModuleModel<ConvNet>>(ConvNet(8, 64));
  if (w.model == "convnet-m") return std::make_unique<ModuleModel<ConvNet>>(ConvNet(32, 256));
  if (w.model == "transformer-s") return std::make_unique<ModuleModel<Transformer>>(Transformer(1000, 64, 2, 4));
  if (w.model == "transformer-m") return std::make_unique<ModuleModel<Transformer>>(Transformer(8000, 256, 6, 8));
  sample_input(w);  // throws for anything that is not a readable file with an input shape
  return std::make_unique<ScriptModel>(w.model);
}
}  // namespace

std::unique_ptr<Model> make_model(const WorkloadOptions& w) {
  seed_cpu_generator(w.seed);
  return build(w);
}

std::unique_ptr<Model> make_teacher(const WorkloadOptions& w) {
  std::unique_ptr<Model> teacher = make_model(w);
  torch::NoGradGuard no_grad;
  seed_cpu_generator(w.seed * 104729 + 3);
  for (torch::Tensor& p : teacher->parameters()) {
    const double spread = p.numel() > 1 ? p.std().item<double>() : 0.1;
    p.add_(torch::randn_like(p) * (0.5 * (spread > 0 ? spread : 0.1)));
  }
  return teacher;
}

std::int64_t parameter_count(Model& model) {
  std::int64_t n = 0;
  for (const auto& p : model.parameters()) n += p.numel();
  return n;
}

std::int64_t parameter_bytes(Model& model) {
  std::int64_t n = 0;
  for (const auto& p : model.parameters()) n += p.numel() * static_cast<std::int64_t>(p.element_size());
  return n;
}

void record_model_size(CheckContext& ctx, Model& model) {
  ctx.metric("model_parameters", static_cast<double>(parameter_count(model)));
  ctx.metric("model_bytes", static_cast<double>(parameter_bytes(model)));
}

}  // namespace sharebench
