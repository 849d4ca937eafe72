// make_torchscript_model PATH: writes a small TorchScript model, as torch.jit.save would from Python,
// for the tests of `--model PATH`. Made with LibTorch's own scripting API (Module::define), so the
// tests need no Python: one sample is a 2x4 float tensor, flattened, through two linear layers to 10
// outputs (250 parameters).
#include <torch/script.h>
#include <torch/torch.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_torchscript_model PATH\n");
    return 2;
  }
  torch::manual_seed(7);
  torch::jit::Module m("TinyNet");
  m.register_parameter("w1", (torch::randn({16, 8}) * 0.3).requires_grad_(true), false);
  m.register_parameter("b1", torch::zeros({16}).requires_grad_(true), false);
  m.register_parameter("w2", (torch::randn({10, 16}) * 0.3).requires_grad_(true), false);
  m.register_parameter("b2", torch::zeros({10}).requires_grad_(true), false);
  m.define(R"(
def forward(self, x):
    h = torch.relu(torch.matmul(x.flatten(1), self.w1.t()) + self.b1)
    return torch.matmul(h, self.w2.t()) + self.b2
)");
  m.save(argv[1]);
  return 0;
}
