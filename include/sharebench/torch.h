// <sharebench/torch.h>: the LibTorch side of an out-of-tree strategy (link sharebench::torch): arena
// tensors (parameters in the harness's shared memory), the per-worker LibTorch settings and CPU
// seeding, the shared model and the model zoo behind --model, and the parameter checks
// (parameters-unchanged, updates-reached-model, model-shared). Include after <sharebench/sharebench.h>.
#pragma once

#include "sharebench.h"
#include "torch_support/arena_tensors.h"
#include "torch_support/parameter_checks.h"
#include "torch_support/shared_optimizer.h"
#include "torch_support/torch_runtime.h"
#include "workload/model_zoo.h"
#include "workload/shared_model.h"
