// torch_runtime: the worker and runner init hooks and the LibTorch facts for the environment
// record. The static initialiser below touches no LibTorch state (only macros): the forkserver must
// be forked before LibTorch is initialised.
#include "torch_support/torch_runtime.h"

#include <dlfcn.h>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <torch/types.h>
#include <torch/version.h>

#include <mutex>
#include <vector>

#include "harness/env/environment.h"
#include "harness/launch/launcher.h"

// Referenced by an --undefined link option of sharebench::torch, so a static link always pulls this
// file in (and with it the hook registration below), even into a program that calls nothing here.
extern "C" {
extern const int sharebench_torch_runtime_linked;
const int sharebench_torch_runtime_linked = 1;
}

namespace sharebench {

namespace {
// OpenBLAS keeps its own thread count, apart from LibTorch's: hold it to the workers' intra-op
// threads, so a threaded OpenBLAS neither oversubscribes the cores nor runs a pool in a process
// about to fork. A no-op for any other BLAS.
void set_blas_threads(std::int64_t threads) {
  using SetThreads = void (*)(int);
  using GetThreads = int (*)();
  auto get = reinterpret_cast<GetThreads>(::dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  if (get && get() == threads) return;
  if (auto set = reinterpret_cast<SetThreads>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) {
    set(static_cast<int>(threads));
  }
}

// Autograd's engine counts every device type's devices on its first backward, once per process
// (Engine::start_device_threads). In a CUDA build that initialises the CUDA driver, which keeps an
// eventfd, pipes and device files open for the process's life: measured on an H100 with LibTorch
// 2.11, every CPU training cell's no-leaks check then read 13 descriptors opened inside work() as
// its leak (docs/gpu.md). One backward of a one-element tensor here, before the descriptors are
// counted, pays that cost up front. A no-op in a CPU build, and skipped under the thread start
// method, where the descriptors are not counted.
void start_autograd_device_threads(const CellConfig& cell) {
  if (!libtorch_has_cuda() || cell.start == StartMethod::kThread) return;
  auto x = torch::ones({1}, torch::requires_grad());
  x.sum().backward();
}

std::vector<std::function<void(const CellConfig&)>>& worker_steps() {
  static std::vector<std::function<void(const CellConfig&)>> steps;
  return steps;
}

// The runner keeps the workers' intra-op thread count too. Called after the forkserver started.
void init_runner(const CellConfig& base) {
  at::set_num_threads(static_cast<int>(base.workload.threads_per_worker));
  set_blas_threads(base.workload.threads_per_worker);
  set_environment_fact("intra_op_threads_runner", std::to_string(at::get_num_threads()));
}

[[maybe_unused]] const bool registered = [] {
  // One OpenBLAS thread from the start, in every process that links this library (the runner,
  // workers, tests): a reference computed with a threaded BLAS sums in another order than a
  // worker's, and results that must be bit-identical (inference's probe, the one-worker serial
  // match) differ in the last bit. The hooks then set the run's count.
  set_blas_threads(1);
  set_worker_init_hook(&init_torch_in_worker);
  set_runner_init_hook(&init_runner);
  set_environment_fact("libtorch", TORCH_VERSION);
  return true;
}();
}  // namespace

void init_torch_in_worker(const CellConfig& cell) {
  static std::once_flag once;
  std::call_once(once, [&] {
    at::set_num_threads(static_cast<int>(cell.workload.threads_per_worker));
    set_blas_threads(cell.workload.threads_per_worker);
    start_autograd_device_threads(cell);
    for (const auto& step : worker_steps()) step(cell);
  });
}

void on_torch_worker_init(std::function<void(const CellConfig&)> step) { worker_steps().push_back(std::move(step)); }

bool libtorch_has_cuda() {
  static const bool loaded = [] {
    void* handle = ::dlopen("libtorch_cuda.so", RTLD_LAZY | RTLD_NOLOAD);
    if (handle) ::dlclose(handle);  // NOLOAD took a reference; give it back
    return handle != nullptr;
  }();
  return loaded;
}

void seed_cpu_generator(std::uint64_t seed) {
  auto generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_current_seed(seed);
}

}  // namespace sharebench
