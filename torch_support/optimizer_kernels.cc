// Adam's and RMSprop's element loops (optimizer_kernels.h). The four arrays are distinct tensors:
// restrict says so, and lets the loops vectorise.
#include "torch_support/optimizer_kernels.h"

#include <cmath>

namespace sharebench {

void adam_update(float* __restrict p, const float* __restrict g, float* __restrict m, float* __restrict v,
                 std::int64_t n, const AdamStep& s) {
  const float b1 = s.beta1, b2 = s.beta2, step = s.lr_over_bias1, root = s.bias2_root, eps = s.eps;
  for (std::int64_t k = 0; k < n; ++k) {
    m[k] = b1 * m[k] + (1 - b1) * g[k];
    v[k] = b2 * v[k] + (1 - b2) * g[k] * g[k];
    p[k] -= step * m[k] / (std::sqrt(v[k]) / root + eps);
  }
}

void rmsprop_update(float* __restrict p, const float* __restrict g, float* __restrict v, std::int64_t n, float lr,
                    float alpha, float eps) {
  for (std::int64_t k = 0; k < n; ++k) {
    v[k] = alpha * v[k] + (1 - alpha) * g[k] * g[k];
    p[k] -= lr * g[k] / (std::sqrt(v[k]) + eps);
  }
}

}  // namespace sharebench
