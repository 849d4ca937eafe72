// The element loops of the shared optimizer (shared_optimizer.h), torch-free: Adam's and RMSprop's
// update of one parameter tensor in place, as torch computes them. Plain loops in this project's
// own code, so ThreadSanitizer sees lock-free steps race on the floats; compiled without errno for
// the square root, so they vectorise (with errno, perf found them as scalar sqrtss calls: the
// step and the serial reference's steps were 20 % of an a3c run's cycles).
#pragma once

#include <cstdint>

namespace sharebench {

struct AdamStep {
  float lr_over_bias1;  // lr / (1 - beta1^t)
  float bias2_root;     // sqrt(1 - beta2^t)
  float beta1, beta2, eps;
};
// m = b1·m + (1-b1)·g;  v = b2·v + (1-b2)·g²;  p -= lr/(1-b1^t) · m / (sqrt(v)/sqrt(1-b2^t) + eps)
void adam_update(float* p, const float* g, float* m, float* v, std::int64_t n, const AdamStep& s);
// v = a·v + (1-a)·g²;  p -= lr · g / (sqrt(v) + eps)
void rmsprop_update(float* p, const float* g, float* v, std::int64_t n, float lr, float alpha, float eps);

}  // namespace sharebench
